import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { inspect } from 'node:util';
import { describe, test } from 'node:test';
import { assertModelsReady } from '../models/backends/registry';
import { ConfigError, loadConfig, parseConfig } from '../config/load';
import { loadSecrets, Secret, SecretsError } from '../config/secrets';
import { backendOf, environmentBackends } from '../env/backends/registry';
import { evaluationHarness, registeredHarnesses } from '../env/evaluators/harnesses/registry';
import { fileURLToPath } from 'node:url';

const WEBRL = fileURLToPath(new URL('../bin/webrl.js', import.meta.url));

const pick = (value: object, keys: string[]) => Object.fromEntries(keys.map((key) => [key, (value as Record<string, unknown>)[key]]));

function rejection(raw: unknown, env: NodeJS.ProcessEnv = {}): string {
  try {
    parseConfig(raw, 'test', env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${error}`);
    return error.message;
  }
  assert.fail(`accepted ${JSON.stringify(raw)}`);
}

describe('configuration', () => {
  test('defaults describe the embedded one-machine setup', () => {
    const config = parseConfig({});
    assert.equal(config.temporal.address, '127.0.0.1:7233');
    assert.equal(config.temporal.namespace, 'webrl');
    assert.equal(config.s3.endpoint, 'http://127.0.0.1:9000');
    assert.equal(config.s3.bucket, 'webrl');
    assert.deepEqual(config.temporal.taskQueues, { control: 'webrl-control', browser: 'webrl-browser', train: 'webrl-train' });
    assert.ok(!('replayDemonstrations' in config.campaign.training), 'unset, so a frozen config stays as it was');
  });

  test('local endpoints follow the stack ports unless set explicitly', () => {
    const moved = parseConfig({ stack: { temporalPort: 17233, minioPort: 19000 } });
    assert.equal(moved.temporal.address, '127.0.0.1:17233');
    assert.equal(moved.s3.endpoint, 'http://127.0.0.1:19000');
    const remote = parseConfig({ s3: { endpoint: 'https://s3.eu-west-1.amazonaws.com', region: 'eu-west-1' } });
    assert.equal(remote.s3.endpoint, 'https://s3.eu-west-1.amazonaws.com');
  });

  const completions = { backend: 'completions', baseUrl: 'http://127.0.0.1:8000/v1', model: 'm' };
  const trainer = { backend: 'external', command: 't {data} {out}' };
  const invalid: Array<[string, unknown, string]> = [
    ['unknown top-level field', { campain: {} }, 'campain: unknown field'],
    ['unknown nested field', { temporal: { adress: 'x:1' } }, 'temporal.adress: unknown field'],
    ['address without port', { temporal: { address: 'localhost' } }, 'temporal.address'],
    ['empty namespace', { temporal: { namespace: '' } }, 'temporal.namespace'],
    ['task queue not a string', { temporal: { taskQueues: { browser: 3 } } }, 'temporal.taskQueues.browser'],
    ['bucket with capitals', { s3: { bucket: 'My_Bucket' } }, 's3.bucket'],
    ['prefix with leading slash', { s3: { prefix: '/runs/' } }, 's3.prefix'],
    ['endpoint not a URL', { s3: { endpoint: 'minio:9000' } }, 's3.endpoint'],
    ['secret key in the file', { s3: { secretAccessKey: 'abc' } }, 's3.secretAccessKey: secrets are not accepted in config files; set AWS_SECRET_ACCESS_KEY'],
    ['API key in the file', { temporal: { apiKey: 'abc' } }, 'temporal.apiKey: secrets are not accepted'],
    ['port out of range', { stack: { minioPort: 70000 } }, 'stack.minioPort'],
    ['port as text', { stack: { temporalUiPort: 'eighty' } }, 'stack.temporalUiPort'],
    ['negative seed', { campaign: { seed: -1 } }, 'campaign.seed'],
    ['campaign name with spaces', { campaign: { name: 'my campaign' } }, 'campaign.name'],
    ['zero in-flight shards', { campaign: { phase: { rolloutShardsInFlight: 0 } } }, 'campaign.phase.rolloutShardsInFlight'],
    ['fractional candidate factor', { campaign: { phase: { candidateFactor: 2.5 } } }, 'campaign.phase.candidateFactor'],
    ['critic band upside down', { campaign: { phase: { criticBand: [0.8, 0.1] } } }, 'campaign.phase.criticBand: expected [low, high]'],
    ['TLS flag not boolean', { temporal: { tls: { enabled: 'yes' } } }, 'temporal.tls.enabled'],
    ['settings not an object', [1, 2], '(root)'],
    [
      'API key in a model endpoint',
      { models: { orm: { backend: 'chat', baseUrl: 'http://127.0.0.1:8000/v1', model: 'm', apiKey: 'sk-abc' } } },
      'models.orm.apiKey: secrets are not accepted in config files; set WEBRL_LLM_API_KEY (or OPENAI_API_KEY)',
    ],
    [
      'critic token in the file',
      { models: { critic: { backend: 'http', baseUrl: 'http://127.0.0.1:8100', token: 't' } } },
      'models.critic.token: secrets are not accepted in config files; set WEBRL_CRITIC_API_KEY',
    ],
    ['unknown reward source', { campaign: { reward: 'critic' } }, 'campaign.reward'],
    [
      'learning rate for an unknown objective',
      { campaign: { training: { learningRates: { actor: 0.01 } } } },
      'campaign.training.learningRates.actor: unknown field',
    ],
    ['negative learning rate', { campaign: { training: { learningRates: { 'actor-webrl': -1 } } } }, 'campaign.training.learningRates.actor-webrl'],
    ['replayed demonstrations not boolean', { campaign: { training: { replayDemonstrations: 'yes' } } }, 'campaign.training.replayDemonstrations'],
    [
      'replayed demonstrations without demonstrations',
      { campaign: { training: { replayDemonstrations: true }, environment: { demonstrationTasks: 0 } } },
      'campaign.training.replayDemonstrations: phase 0 collects no demonstrations to replay: campaign.environment.demonstrationTasks is 0',
    ],
    ['unknown model backend', { models: { orm: { backend: 'gpt' } } }, 'models.orm.backend'],
    [
      'action targets not boolean',
      { models: { orm: { backend: 'chat', baseUrl: 'http://127.0.0.1:8000/v1', model: 'm', actionTargets: 'yes' } } },
      'models.orm.actionTargets',
    ],
    ['chat ORM without a model', { models: { orm: { backend: 'chat', baseUrl: 'http://127.0.0.1:8000/v1' } } }, 'models.orm.model'],
    ['endpoint URL not http', { models: { feasibility: { backend: 'chat', baseUrl: 'ftp://x/v1', model: 'm' } } }, 'models.feasibility.baseUrl'],
    [
      'file path on an http critic',
      { models: { critic: { backend: 'http', baseUrl: 'http://127.0.0.1:8100', path: 'c.onnx' } } },
      'models.critic.path: unknown field',
    ],
    [
      'zero concurrency',
      { models: { taskGenerator: { backend: 'chat', baseUrl: 'http://127.0.0.1:8000/v1', model: 'm', concurrency: 0 } } },
      'models.taskGenerator.concurrency',
    ],
    [
      'trainer command without {out}',
      { models: { trainer: { backend: 'external', command: 'train --data {data}' } } },
      'models.trainer.command: the command must name {out}',
    ],
    [
      'trainer command with an unknown placeholder',
      { models: { trainer: { backend: 'external', command: 'train {data} {out} {gpu}' } } },
      'models.trainer.command: unknown placeholder {gpu}',
    ],
    [
      'remote actor with the embedded trainer',
      { models: { actor: { backend: 'completions', baseUrl: 'http://127.0.0.1:8000/v1', model: 'm' } } },
      'models.actor.backend: a completions actor needs models.trainer.backend: external',
    ],
    [
      'serving an embedded actor',
      { models: { serving: { backend: 'command', baseUrl: 'http://127.0.0.1:8000/v1', command: 'deploy {checkpoint} {name}' } } },
      'models.serving.backend: serving deploys a completions actor',
    ],
    [
      'vllm-lora on a shared directory without one',
      {
        models: {
          actor: { backend: 'completions', baseUrl: 'http://127.0.0.1:8000/v1', model: 'm' },
          trainer: { backend: 'external', command: 't {data} {out}' },
          serving: { backend: 'vllm-lora', baseUrl: 'http://127.0.0.1:8000/v1' },
        },
      },
      'models.serving.sharedDir: adapterLocation shared-dir needs sharedDir',
    ],
    [
      'adapters from s3 with vLLM',
      {
        models: {
          actor: { backend: 'completions', baseUrl: 'http://127.0.0.1:8000/v1', model: 'm' },
          trainer: { backend: 'external', command: 't {data} {out}' },
          serving: { backend: 'vllm-lora', baseUrl: 'http://127.0.0.1:8000/v1', adapterLocation: 's3' },
        },
      },
      'models.serving.adapterLocation: vLLM loads adapters from a path on its own disk (else a hub id) and has no s3 loader',
    ],
    [
      'a trainer rank above the server’s',
      {
        models: {
          actor: { backend: 'completions', baseUrl: 'http://127.0.0.1:8000/v1', model: 'm' },
          trainer: { backend: 'external', command: 'webrl-torch train --data {data} --out {out} --lora-rank 64' },
          serving: { backend: 'vllm-lora', baseUrl: 'http://127.0.0.1:8000/v1', sharedDir: '/srv/adapters' },
        },
      },
      "models.trainer.command: --lora-rank 64 is above the server's --max-lora-rank 16 (models.serving.maxLoraRank): vLLM would refuse every adapter",
    ],
    [
      'a full fine-tune served by runtime LoRA',
      {
        models: {
          actor: { backend: 'completions', baseUrl: 'http://127.0.0.1:8000/v1', model: 'm' },
          trainer: { backend: 'external', command: 'webrl-torch train --data {data} --out {out} --full-finetune' },
          serving: { backend: 'vllm-lora', baseUrl: 'http://127.0.0.1:8000/v1', sharedDir: '/srv/adapters', maxLoraRank: 64 },
        },
      },
      'models.trainer.command: the trainer writes full checkpoints (--full-finetune); vllm-lora serving loads LoRA adapters',
    ],
    [
      'a local model with the embedded actor',
      { stack: { llm: { model: 'SmolLM2-135M-Instruct' } } },
      'stack.llm: the served model is the actor: models.actor.backend must be completions',
    ],
    ['a local model the project does not provision', { stack: { llm: { model: 'Llama-3.1-8B-Instruct' } } }, 'stack.llm.model'],
    [
      'a served critic trained by the embedded trainer',
      { models: { critic: { backend: 'served', baseUrl: 'http://127.0.0.1:8100', sharedDir: 'critics' } } },
      'models.critic.backend: served values with the critic checkpoints webrl-torch trains: models.trainer.backend must be external',
    ],
    [
      'a served critic with nowhere to sync its checkpoints',
      { models: { critic: { backend: 'served', baseUrl: 'http://127.0.0.1:8100' }, trainer } },
      'models.critic.sharedDir',
    ],
    [
      'a local critic server with a critic it does not serve',
      { stack: { llm: { model: 'SmolLM2-135M-Instruct', criticPort: 8100 } }, models: { actor: completions, trainer } },
      'stack.llm.criticPort: the critic server values the critics the campaign trains: models.critic.backend must be served (it is embedded)',
    ],
    [
      'a local critic server on another port than the critic asks',
      {
        stack: { llm: { model: 'SmolLM2-135M-Instruct', criticPort: 8100 } },
        models: { actor: completions, trainer, critic: { backend: 'served', baseUrl: 'http://127.0.0.1:8101', sharedDir: 'critics' } },
      },
      'models.critic.baseUrl: the main job serves the critic on 127.0.0.1:8100 (stack.llm.criticPort); baseUrl names http://127.0.0.1:8101',
    ],
    [
      'deploy command with an unknown placeholder',
      {
        models: {
          actor: { backend: 'completions', baseUrl: 'http://127.0.0.1:8000/v1', model: 'm' },
          trainer: { backend: 'external', command: 't {data} {out}' },
          serving: { backend: 'command', baseUrl: 'http://127.0.0.1:8000/v1', command: 'deploy {out}' },
        },
      },
      'models.serving.command: unknown placeholder {out}',
    ],
    [
      'chat-template without the tokenizer files',
      { models: { actor: { ...completions, promptFormat: 'chat-template' }, trainer } },
      "models.actor.tokenizer: promptFormat chat-template renders the model's own template",
    ],
    [
      'chat-template from a directory without a template',
      { models: { actor: { ...completions, promptFormat: 'chat-template', tokenizer: '/nonexistent-model' }, trainer } },
      'models.actor.tokenizer: cannot read /nonexistent-model/tokenizer_config.json',
    ],
    ['an unknown prompt format', { models: { actor: { ...completions, promptFormat: 'alpaca' }, trainer } }, 'models.actor.promptFormat'],
    [
      'a context no larger than maxTokens',
      { models: { actor: { ...completions, contextTokens: 2048 }, trainer } },
      'models.actor.contextTokens: the context (2048 tokens) must exceed maxTokens (2048)',
    ],
    [
      'no oracle demonstrations and nothing else to start from',
      { models: { actor: { ...completions, oracleDemonstrations: false }, trainer } },
      'models.actor.oracleDemonstrations: without oracle demonstrations phase 0 needs an SFT data file',
    ],
    [
      'SFT data with both a path and a key',
      { models: { actor: { ...completions, sftData: { path: 'a.json', key: 'k', format: 'webrl-sharegpt' } }, trainer } },
      'models.actor.sftData: expected exactly one of path',
    ],
    [
      'SFT data in an unknown format',
      { models: { actor: { ...completions, sftData: { path: 'a.json', format: 'alpaca' } }, trainer } },
      'models.actor.sftData.format',
    ],
    ['an init that is neither a path nor a key', { models: { actor: { ...completions, init: { url: 'http://x' } }, trainer } }, 'models.actor.init'],
    [
      'a MiniWoB++ time limit written as text',
      { campaign: { environment: { backend: 'miniwob', miniwob: { timeLimit: '120' } } } },
      "campaign.environment.miniwob.timeLimit: expected 'page' or a whole number of seconds from 1 to 3600 (a number, not text)",
    ],
    [
      'a MiniWoB++ task type listed twice',
      { campaign: { environment: { backend: 'miniwob', miniwob: { taskTypes: ['click-button', 'click-link', 'click-button'] } } } },
      'campaign.environment.miniwob.taskTypes[2]: task type click-button is listed twice (also at [0])',
    ],
    [
      'a seed range of billions of page loads',
      { campaign: { environment: { backend: 'miniwob', miniwob: { seeds: { train: { from: 0, to: 2147483638 } } } } } },
      'campaign.environment.miniwob.seeds.train: at most 10000 seeds per split',
    ],
    [
      'a trainer LoRA rank that is not a number',
      { models: { actor: completions, trainer: { backend: 'external', command: 'webrl-torch train --data {data} --out {out} --lora-rank abc' } } },
      'models.trainer.command: --lora-rank must be a whole number of at least 1',
    ],
    [
      'a trainer LoRA rank above the served model’s --max-lora-rank',
      {
        stack: { llm: { model: 'SmolLM2-135M-Instruct', maxLoraRank: 8 } },
        models: { actor: completions, trainer: { ...trainer, command: 't {data} {out} --lora-rank 16' } },
      },
      "models.trainer.command: --lora-rank 16 is above the served model's --max-lora-rank 8 (stack.llm.maxLoraRank)",
    ],
    [
      'webrl-torch’s default LoRA rank above the served model’s',
      {
        stack: { llm: { model: 'SmolLM2-135M-Instruct', maxLoraRank: 8 } },
        models: { actor: completions, trainer: { ...trainer, command: 'webrl-torch train --data {data} --out {out}' } },
      },
      "models.trainer.command: --lora-rank 16 is above the served model's --max-lora-rank 8",
    ],
    [
      'a served model on MinIO’s port',
      { stack: { llm: { model: 'SmolLM2-135M-Instruct', port: 9000 } }, models: { actor: { ...completions, baseUrl: 'http://127.0.0.1:9000/v1' }, trainer } },
      "stack.llm.port: port 9000 is stack.minioPort's: the served model needs a port of its own",
    ],
    [
      'a served model on Temporal’s port',
      { stack: { llm: { model: 'SmolLM2-135M-Instruct', port: 7233 } }, models: { actor: { ...completions, baseUrl: 'http://127.0.0.1:7233/v1' }, trainer } },
      "stack.llm.port: port 7233 is stack.temporalPort's",
    ],
    [
      'an actor elsewhere than the served model',
      { stack: { llm: { model: 'SmolLM2-135M-Instruct', port: 8000 } }, models: { actor: { ...completions, baseUrl: 'http://127.0.0.1:8001/v1' }, trainer } },
      'models.actor.baseUrl: the actor is the model stack.llm serves on 127.0.0.1:8000: expected http://127.0.0.1:8000/v1, got host 127.0.0.1 port 8001',
    ],
    [
      'a model endpoint with credentials in its URL',
      { models: { actor: { ...completions, baseUrl: 'http://user:s3cret-pw@127.0.0.1:8000/v1' }, trainer } },
      'models.actor.baseUrl: a URL with credentials (user:password@) is not accepted',
    ],
  ];
  for (const [what, raw, expected] of invalid) {
    test(`rejects ${what}, naming the field`, () => {
      assert.match(rejection(raw), new RegExp(expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    });
  }

  test('an env-ctrl reset URL with credentials is refused and its password never printed', () => {
    const tasks = { train: { path: 'train.json' }, test: { path: 'test.json' } };
    const reset = { hook: { kind: 'env-ctrl', url: 'http://admin:hunter2-pw@127.0.0.1:8877' }, policy: 'never' };
    const message = rejection({
      campaign: {
        phase: { curriculum: false },
        environment: { backend: 'webarena', webarena: { tasks, sites: { gitlab: { url: 'http://127.0.0.1:8023', reset } } } },
      },
    });
    assert.match(message, /campaign\.environment\.webarena\.sites\.gitlab\.reset\.hook\.url: a URL with credentials \(user:password@\) is not accepted/);
    assert.ok(!message.includes('hunter2-pw'), message);
  });

  test('a chat template that does not parse names its file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'webrl-template-'));
    await cp(fileURLToPath(new URL('./models/fixtures/tokenizers/chatml', import.meta.url)), dir, { recursive: true });
    await writeFile(join(dir, 'chat_template.jinja'), '{% for message in messages %}{{ message.content }');
    assert.match(
      rejection({ models: { actor: { ...completions, promptFormat: 'chat-template', tokenizer: dir }, trainer } }),
      new RegExp(`models\\.actor\\.tokenizer: ${join(dir, 'chat_template.jinja').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: the chat template does not parse`),
    );
  });

  describe("the actor's SFT data and init checkpoint, checked before start", () => {
    const sftFile = async (name: string, content: string | Buffer) => {
      const dir = await mkdtemp(join(tmpdir(), 'webrl-sft-'));
      await writeFile(join(dir, name), content);
      return join(dir, name);
    };
    const turns = (human: string, gpt = 'do(action="Click", element="1")') => ({
      conversations: [
        { from: 'human', value: human },
        { from: 'gpt', value: gpt },
      ],
    });
    const problemsOf = async (actor: object): Promise<string[]> => {
      try {
        await assertModelsReady(parseConfig({ models: { actor: { ...completions, ...actor }, trainer } }), 'c.yaml');
      } catch (error) {
        assert.ok(error instanceof ConfigError, String(error));
        return error.message.split('\n').slice(1);
      }
      return [];
    };
    const sharegpt = (path: string) => ({ sftData: { path, format: 'webrl-sharegpt' } });

    test('a missing file or init names the field and the path', async () => {
      assert.deepEqual(await problemsOf({ ...sharegpt('/nonexistent/sft.json'), init: { path: '/nonexistent/ckpt' } }), [
        '  - models.actor.sftData.path (/nonexistent/sft.json): cannot read the file: ENOENT',
        '  - models.actor.init.path: /nonexistent/ckpt does not exist',
      ]);
    });

    test('non-JSON, wrong roles, empty or missing conversations, lone surrogates, empty prompts and duplicates: one line each, with the file', async () => {
      const path = await sftFile(
        'sft.json',
        JSON.stringify([
          turns('a'),
          { conversations: [] },
          { messages: [] },
          {
            conversations: [
              { from: 'user', value: 'a' },
              { from: 'gpt', value: 'b' },
            ],
          },
          turns('lone \ud800 surrogate'),
          turns('  '),
          turns('a'),
        ]),
      );
      const where = `models.actor.sftData.path (${path})`;
      assert.deepEqual(await problemsOf(sharegpt(path)), [
        `  - ${where}: [1] conversations: expected at least two turns (a human turn and the gpt turn it trains)`,
        `  - ${where}: [2] conversations: missing: each entry needs conversations: [{from, value}, ...]`,
        `  - ${where}: [3] conversations.0.from: Invalid option: expected one of "system"|"human"|"gpt"`,
        `  - ${where}: [4] conversations.0.value: holds a lone UTF-16 surrogate (a broken \\uD800-\\uDFFF escape), which no tokenizer encodes`,
        `  - ${where}: [5] conversations.0.value: the human turn (the prompt) is empty`,
        `  - ${where}: [6]: the same prompt and response as [0] (a duplicate entry)`,
      ]);
      const notJson = await sftFile('sft.json', '[{"conversations": ');
      assert.match((await problemsOf(sharegpt(notJson)))[0]!, /^ {2}- models\.actor\.sftData\.path \(.*sft\.json\): not JSON: /);
    });

    test('a byte order mark is read past; a huge bad file lists its first problems, then their count', async () => {
      assert.deepEqual(await problemsOf(sharegpt(await sftFile('bom.json', `\uFEFF${JSON.stringify([turns('a')])}`))), []);
      const huge = await sftFile('huge.json', JSON.stringify(Array.from({ length: 200_000 }, () => ({ id: 1 }))));
      const lines = await problemsOf(sharegpt(huge));
      assert.equal(lines.length, 11);
      assert.equal(lines.at(-1), '  - ... and 199990 more problems');
    });

    test('webrl config check refuses a bad SFT file before anything starts, naming the field and the file', async () => {
      const sft = await sftFile('sft.json', JSON.stringify([{ messages: [] }]));
      const config = join(dirname(sft), 'campaign.json');
      await writeFile(config, JSON.stringify({ campaign: { name: 'sft-check' }, models: { actor: { ...completions, ...sharegpt(sft) }, trainer } }));
      const run = spawnSync(process.execPath, [WEBRL, 'config', 'check', config], { encoding: 'utf8' });
      assert.equal(run.status, 1);
      assert.match(
        run.stderr,
        new RegExp(`models\\.actor\\.sftData\\.path \\(${sft.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\): \\[0\\] conversations: missing`),
      );
    });
  });

  test('a completions actor writes the released prompt by default; chat-template reads the model’s tokenizer files', () => {
    const actor = (extra: object) => parseConfig({ models: { actor: { ...completions, ...extra }, trainer } }).models.actor;
    assert.deepEqual(pick(actor({}), ['promptFormat', 'contextTokens', 'oracleDemonstrations']), {
      promptFormat: 'webrl-llama3',
      contextTokens: 'server',
      oracleDemonstrations: true,
    });
    const chat = actor({
      promptFormat: 'chat-template',
      tokenizer: fileURLToPath(new URL('./models/fixtures/tokenizers/chatml', import.meta.url)),
      contextTokens: 8192,
      sftData: { path: 'web_policy_sft.json', format: 'webrl-sharegpt' },
      init: { key: 'models/sft' },
    });
    assert.deepEqual(pick(chat, ['promptFormat', 'contextTokens', 'sftData', 'init']), {
      promptFormat: 'chat-template',
      contextTokens: 8192,
      sftData: { path: 'web_policy_sft.json', format: 'webrl-sharegpt' },
      init: { key: 'models/sft' },
    });
    // The model stack.llm serves is provisioned by the main job: its template is checked there, not before it exists.
    const served = { ...completions, promptFormat: 'chat-template', tokenizer: '/nonexistent-model' };
    assert.deepEqual(
      pick(parseConfig({ stack: { llm: { model: 'SmolLM2-135M-Instruct' } }, models: { actor: served, trainer } }).models.actor, ['promptFormat']),
      {
        promptFormat: 'chat-template',
      },
    );
  });

  test('an invalid environment override names the variable', () => {
    const message = rejection({}, { WEBRL_S3_BUCKET: 'Bad Bucket' });
    assert.match(message, /s3\.bucket \(from WEBRL_S3_BUCKET\)/);
  });

  test('loads YAML and JSON campaign files, environment overriding the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'webrl-config-'));
    await writeFile(join(dir, 'c.yaml'), 'campaign:\n  name: shop-run\n  seed: 7\ns3:\n  bucket: from-file\n');
    await writeFile(join(dir, 'c.json'), JSON.stringify({ temporal: { namespace: 'research' } }));
    const yaml = await loadConfig(join(dir, 'c.yaml'), { WEBRL_S3_BUCKET: 'from-env' });
    assert.equal(yaml.campaign.name, 'shop-run');
    assert.equal(yaml.campaign.seed, 7);
    assert.equal(yaml.s3.bucket, 'from-env');
    assert.equal((await loadConfig(join(dir, 'c.json'), {})).temporal.namespace, 'research');
    await writeFile(join(dir, 'broken.yaml'), 'campaign: [unclosed\n');
    await assert.rejects(loadConfig(join(dir, 'broken.yaml'), {}), /broken\.yaml.*not valid YAML/s);
    await assert.rejects(loadConfig(join(dir, 'missing.yaml'), {}), /missing\.yaml.*ENOENT/s);
  });

  test('models default to the embedded backends, and remote ones take their endpoint settings', () => {
    assert.deepEqual(parseConfig({}).models, {
      actor: { backend: 'embedded' },
      orm: { backend: 'embedded' },
      critic: { backend: 'embedded' },
      serving: { backend: 'none' },
      taskGenerator: { backend: 'embedded' },
      feasibility: { backend: 'none' },
      trainer: { backend: 'embedded' },
    });
    const models = parseConfig({
      models: {
        actor: { backend: 'completions', baseUrl: 'http://gpu:8000/v1', model: 'webrl-llama', mode: 'prompt_logprobs' },
        orm: { backend: 'chat', baseUrl: 'http://gpu:8001/v1', model: 'orm', concurrency: 8 },
        critic: { backend: 'onnx-file', path: '/models/critic.onnx' },
        feasibility: { backend: 'chat', baseUrl: 'https://api.example.com/v1', model: 'gpt', keepUnjudged: true },
        trainer: { backend: 'external', command: 'python train.py --data {data} --init {init} --out {out}', timeoutSeconds: 3600 },
      },
    }).models;
    assert.equal(models.actor.backend === 'completions' && models.actor.maxAttempts, 3);
    assert.equal(models.orm.backend === 'chat' && models.orm.concurrency, 8);
    assert.equal(models.orm.backend === 'chat' && models.orm.actionTargets, false, "WebRL's ORM input unless asked");
    assert.equal(models.feasibility.backend === 'chat' && models.feasibility.batchSize, 10);
  });

  test("unset epochs follow the trainer: the embedded trainer's for its ONNX models, WebRL's (SFT 1, ORM 4, critic 1, actor 1) for an external one", () => {
    const epochs = (config: ReturnType<typeof parseConfig>) => {
      const { sftEpochs, ormEpochs, criticEpochs, actorEpochs } = config.campaign.training;
      return [sftEpochs, ormEpochs, criticEpochs, actorEpochs];
    };
    assert.deepEqual(epochs(parseConfig({})), [8, 8, 2, 2]);
    const external = { models: { trainer: { backend: 'external', command: 'webrl-torch train --data {data} --out {out}' } } };
    assert.deepEqual(epochs(parseConfig(external)), [1, 4, 1, 1]);
    assert.deepEqual(epochs(parseConfig({ ...external, campaign: { training: { ormEpochs: 2, actorEpochs: 3 } } })), [1, 2, 1, 3]);
  });

  test('the observation profile follows the actor unless set: webrl (500 ms wait) for a completions actor, else default (none)', () => {
    assert.deepEqual(parseConfig({}).campaign.environment.observation, { profile: 'default', minWaitMs: 0 });
    const actor = { backend: 'completions', baseUrl: 'http://gpu:8000/v1', model: 'webrl-llama' };
    const trainer = { backend: 'external', command: 'train --data {data} --out {out}' };
    assert.deepEqual(parseConfig({ models: { actor, trainer } }).campaign.environment.observation, { profile: 'webrl', minWaitMs: 500 });
    const chosen = parseConfig({ campaign: { environment: { observation: { profile: 'default', minWaitMs: 100 } } }, models: { actor, trainer } });
    assert.deepEqual(chosen.campaign.environment.observation, { profile: 'default', minWaitMs: 100 });
    assert.deepEqual(parseConfig({ campaign: { environment: { observation: { profile: 'webrl' } } } }).campaign.environment.observation, {
      profile: 'webrl',
      minWaitMs: 500,
    });
    assert.match(rejection({ campaign: { environment: { observation: { profile: 'reference' } } } }), /campaign\.environment\.observation\.profile/);
    assert.deepEqual(
      parseConfig(parseConfig({ models: { actor, trainer } })).campaign.environment.observation,
      { profile: 'webrl', minWaitMs: 500 },
      'a resolved config parses to itself',
    );
  });

  test('campaign.environment is the union of the registered backends: each member its own settings, the first the default', () => {
    assert.deepEqual(
      environmentBackends().map((backend) => backend.name),
      ['embedded', 'webarena', 'miniwob'],
    );
    const embedded = parseConfig({ campaign: { environment: { worldSeed: 7 } } }).campaign.environment;
    assert.equal(embedded.backend, 'embedded');
    assert.equal(backendOf(parseConfig({})).backend.name, 'embedded');
    // Key order (what the frozen config's bytes and their sha256 depend on): backend, its section, the shared fields.
    const tasks = { train: { path: 'train.json' }, test: { key: 'tasks/test.json' } };
    const webarena = parseConfig({ campaign: { phase: { curriculum: false }, environment: { backend: 'webarena', webarena: { tasks } } } }).campaign
      .environment;
    assert.deepEqual(Object.keys(webarena), [
      'backend',
      'webarena',
      'worldSeed',
      'testTasks',
      'demonstrationTasks',
      'maxSteps',
      'episodeDeadlineSeconds',
      'screenshotRate',
      'observation',
    ]);
    assert.deepEqual(Object.keys(embedded), ['backend', ...Object.keys(webarena).slice(2)]);
    assert.match(
      rejection({ campaign: { environment: { backend: 'mini' } } }),
      /campaign\.environment\.backend: Invalid option: expected one of "embedded"\|"webarena"\|"miniwob"/,
    );
    const miniwob = parseConfig({ campaign: { environment: { backend: 'miniwob', miniwob: { taskTypes: ['click-button'] } } } }).campaign.environment;
    assert.deepEqual(Object.keys(miniwob), ['backend', 'miniwob', ...Object.keys(webarena).slice(2)]);
    const overlapping = { backend: 'miniwob', miniwob: { seeds: { train: { from: 0, to: 20 }, test: { from: 10, to: 30 } }, taskTypes: ['no-such-task'] } };
    assert.match(
      rejection({ campaign: { environment: overlapping } }),
      /campaign\.environment\.miniwob\.seeds: the train seeds \[0, 20\) and the test seeds \[10, 30\) overlap/,
    );
    assert.match(
      rejection({ campaign: { environment: overlapping } }),
      /campaign\.environment\.miniwob\.taskTypes\[0\]: miniwob 1\.1\.0 has no task type no-such-task/,
    );
    assert.match(
      rejection({ campaign: { environment: { webarena: { tasks } } } }),
      /campaign\.environment\.backend: a webarena section is given but backend is embedded; set backend: webarena/,
    );
    assert.match(
      rejection({ campaign: { environment: { backend: 'webarena' } } }),
      /campaign\.environment\.webarena: backend webarena needs the webarena section/,
    );
  });

  test('campaign.environment.webarena.harness names a registered harness; an unknown one is a one-line error naming the field', () => {
    assert.deepEqual(
      registeredHarnesses().map((harness) => harness.name),
      ['webarena-lite', 'webarena', 'webarena-verified'],
    );
    const tasks = { train: { path: 'train.json' }, test: { path: 'test.json' } };
    const withHarness = (harness: unknown, judge?: unknown) => ({
      ...(judge ? { models: { judge } } : {}),
      campaign: { phase: { curriculum: false }, environment: { backend: 'webarena', webarena: { tasks, harness } } },
    });
    const verified = parseConfig(withHarness('webarena-verified')).campaign.environment;
    assert.equal(verified.backend === 'webarena' && verified.webarena.harness, 'webarena-verified');
    assert.deepEqual(rejection(withHarness('webarena-plus')).split('\n').slice(1), [
      '  - campaign.environment.webarena.harness: Invalid option: expected one of "webarena-lite"|"webarena"|"webarena-verified"',
    ]);
    assert.throws(() => evaluationHarness('webarena-plus'), {
      message: 'harness: "webarena-plus" is not a registered evaluation harness (webarena-lite, webarena, webarena-verified)',
    });
    // A harness's own rules on the rest of the config: the original WebArena's judges with an LLM.
    assert.match(rejection(withHarness('webarena')), /models\.judge: the original WebArena harness grades fuzzy_match and ua_match with an LLM/);
    assert.equal(parseConfig(withHarness('webarena', { backend: 'chat', baseUrl: 'http://127.0.0.1:9/v1', model: 'judge' })).models.judge?.backend, 'chat');
  });

  test('model endpoint keys come from WEBRL_LLM_API_KEY, else OPENAI_API_KEY, and never print', () => {
    const both = loadSecrets({ WEBRL_LLM_API_KEY: 'sk-webrl', OPENAI_API_KEY: 'sk-openai', WEBRL_CRITIC_API_KEY: 'ck-1' });
    assert.equal(both.models?.llmApiKey?.reveal(), 'sk-webrl');
    assert.equal(both.models?.criticApiKey?.reveal(), 'ck-1');
    assert.equal(loadSecrets({ OPENAI_API_KEY: 'sk-openai' }).models?.llmApiKey?.reveal(), 'sk-openai');
    assert.equal(loadSecrets({}).models?.llmApiKey, undefined);
    const printed = [JSON.stringify(both), inspect(both, { depth: 5 })].join('\n');
    for (const value of ['sk-webrl', 'ck-1']) assert.ok(!printed.includes(value), `${value} printed`);
  });

  test('secrets come from the environment and never print', () => {
    const secrets = loadSecrets({ AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'sup3r-s3cret', TEMPORAL_API_KEY: 'tk-123' });
    assert.equal(secrets.s3?.secretAccessKey.reveal(), 'sup3r-s3cret');
    const printed = [JSON.stringify(secrets), inspect(secrets, { depth: 5 }), String(secrets.temporal.apiKey), `${secrets.s3?.accessKeyId}`].join('\n');
    for (const value of ['AKIDEXAMPLE', 'sup3r-s3cret', 'tk-123']) assert.ok(!printed.includes(value), `${value} leaked`);
    assert.ok(new Secret('x').toJSON() === '[redacted]');
    assert.throws(() => loadSecrets({ AWS_ACCESS_KEY_ID: 'only-id' }), SecretsError);
  });
});
