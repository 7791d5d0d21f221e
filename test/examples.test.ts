/** The campaign files in examples/ are valid configs as written (what `webrl config check` reads first). */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { test } from 'node:test';
import { loadConfig } from '../config/load';

const DIR = new URL('../examples/', import.meta.url);

test('every example campaign file passes config validation', async () => {
  const files = (await readdir(DIR)).filter((name) => name.endsWith('.yaml'));
  assert.ok(files.includes('smollm2-miniwob.yaml'), files.join(', '));
  for (const name of files) await loadConfig(new URL(name, DIR).pathname, {});
});

test('the SmolLM2 example serves its actor and its critic on the machine that runs it and trains them with webrl-torch', async () => {
  const config = await loadConfig(new URL('smollm2-miniwob.yaml', DIR).pathname, {});
  assert.equal(config.stack.llm?.model, 'SmolLM2-135M-Instruct');
  assert.equal(config.models.actor.backend === 'completions' && config.models.actor.baseUrl, `http://127.0.0.1:${config.stack.llm.port}/v1`);
  assert.match(
    config.models.trainer.backend === 'external' ? config.models.trainer.command : '',
    /webrl-torch train --base-model \.webrl\/models\/SmolLM2-135M-Instruct /,
  );
  // The critic filter runs, as in WebRL, with the critic each phase trains.
  assert.equal(config.models.critic.backend === 'served' && config.models.critic.baseUrl, `http://127.0.0.1:${config.stack.llm.criticPort}`);
  assert.equal(config.campaign.environment.backend, 'miniwob');
});
