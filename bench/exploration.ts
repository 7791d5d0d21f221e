/**
 * `npm run bench:exploration`: how much an RL phase could find that the SFT actor does not already do.
 * The actor is trained as a campaign's phase 0 trains it (oracle demonstrations of a seeded sample of
 * train tasks, the campaign's SFT epochs and batch size), then rolled out on other train tasks: once
 * greedy, and --samples times sampled at each --temperatures value (the rollouts a phase learns from).
 * A task that no sample solves gives the WebRL objective nothing to reinforce, so pass@k over the
 * greedy success bounds what self-improvement can add there. Figures are split by whether the task's
 * template was among the demonstrations ("taught") or not ("untaught": the actor never saw one solved).
 *   - exploration.greedy_success.{taught,untaught}: greedy success;
 *   - exploration.pass_at_k.t<T>.{taught,untaught}: share of tasks solved by at least one sample;
 *   - exploration.sample_success.t<T>: mean success of one sample;
 *   - exploration.new_successes.t<T>: tasks the greedy actor fails that some sample solves.
 * Run: node --import tsx bench/exploration.ts [--seed 1] [--demo-tasks 60] [--probe-tasks 90]
 *   [--samples 4] [--temperatures 1,2] [--max-steps 12] [--concurrency 2]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { demonstrationTasks } from '../activities/campaign/demonstrationTasks';
import { createOraclePolicy } from '../browser/policies/oracle';
import type { Policy } from '../browser/policies/policy';
import { BrowserPool } from '../browser/pool';
import { deriveSeed } from '../browser/rng';
import { TrainingSchema } from '../config/schema';
import { EmbeddedEnvironment, toEpisodeTask } from '../env/embedded';
import { startEmbeddedSites } from '../env/embedded-sites';
import { Rng } from '../env/random';
import { generateSplits } from '../env/tasks/generate';
import type { WebArenaTask } from '../env/tasks/schema';
import { Actor } from '../models/actor';
import { createActorPolicy } from '../models/actorPolicy';
import { loadModel } from '../models/checkpoint';
import { recordingPolicy } from '../models/recordingPolicy';
import { train } from '../models/train/trainer';

const { values: flags } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    'demo-tasks': { type: 'string', default: '60' },
    'probe-tasks': { type: 'string', default: '90' },
    samples: { type: 'string', default: '4' },
    temperatures: { type: 'string', default: '1,2' },
    'max-steps': { type: 'string', default: '12' },
    concurrency: { type: 'string', default: '2' },
    'world-seed': { type: 'string', default: '2411' },
  },
});
const SEED = Number(flags.seed);
const SAMPLES = Number(flags.samples);
const TEMPERATURES = flags.temperatures.split(',').map(Number);
const MAX_STEPS = Number(flags['max-steps']);
const WORLD_SEED = Number(flags['world-seed']);

const log = (message: string) => process.stderr.write(`[bench/exploration] ${message}\n`);
const training = TrainingSchema.parse({});
const sites = await startEmbeddedSites({ seed: WORLD_SEED });
const { train: trainSplit } = generateSplits(WORLD_SEED);
const environment = new EmbeddedEnvironment({ siteUrls: sites.urls, tasks: trainSplit });
const pool = await BrowserPool.start({ size: Number(flags.concurrency) });
const work = await mkdtemp(join(tmpdir(), 'bench-exploration-'));

/** Runs one episode per task; returns the ids of the tasks the evaluator scored 1. */
async function rollOut(label: string, tasks: readonly WebArenaTask[], policyFor: (task: WebArenaTask) => Policy): Promise<Set<string>> {
  const started = performance.now();
  const requests = tasks.map((task) => ({ task: toEpisodeTask(task, sites.urls), policy: policyFor(task), environment, options: { maxSteps: MAX_STEPS } }));
  const results = await pool.runAll(requests);
  const infrastructure = results.filter((r) => r.outcome.infraFailure).length;
  if (infrastructure > 0) throw new Error(`${label}: ${infrastructure} episodes failed on infrastructure; the figures would undercount`);
  const solved = new Set(results.filter((r) => r.outcome.score === 1).map((r) => String(r.outcome.taskId)));
  log(`${label}: ${solved.size} of ${tasks.length} solved, ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return solved;
}

const bench: string[] = [];
const report = (name: string, value: number, unit: string) => bench.push(`BENCH ${name} ${value.toFixed(3)} ${unit}`);

try {
  // Phase 0 of a campaign with this seed: the same demonstration sample, epochs and batch size.
  const demoTasks = demonstrationTasks(trainSplit, Number(flags['demo-tasks']), SEED);
  const recorders = new Map(demoTasks.map((t) => [String(t.task_id), recordingPolicy(createOraclePolicy())]));
  const demonstrated = await rollOut('oracle demonstrations', demoTasks, (t) => recorders.get(String(t.task_id))!.policy);
  const records = demoTasks.filter((t) => demonstrated.has(String(t.task_id))).flatMap((t) => recorders.get(String(t.task_id))!.rounds);
  const actorPath = join(work, 'actor-sft.onnx');
  await train({ objective: 'actor-sft', data: { records }, outPath: actorPath, seed: SEED, epochs: training.sftEpochs, batchSize: training.batchSize });
  const actor = new Actor(await loadModel(actorPath, { kind: 'actor' }));

  const demoIds = new Set(demoTasks.map((t) => t.task_id));
  const taughtTemplates = new Set(demoTasks.map((t) => t.intent_template_id));
  const probe = new Rng(SEED).fork('exploration-probe').sample(
    trainSplit.filter((t) => !demoIds.has(t.task_id)),
    Number(flags['probe-tasks']),
  );
  const groups = {
    taught: probe.filter((t) => taughtTemplates.has(t.intent_template_id)),
    untaught: probe.filter((t) => !taughtTemplates.has(t.intent_template_id)),
  };
  log(`${demoTasks.length} demonstration tasks on ${taughtTemplates.size} templates; probe: ${groups.taught.length} tasks on taught templates, ${groups.untaught.length} on untaught ones`);
  const share = (tasks: readonly WebArenaTask[], solved: (id: string) => boolean) => tasks.filter((t) => solved(String(t.task_id))).length / Math.max(1, tasks.length);

  const greedy = await rollOut('greedy', probe, () => createActorPolicy(actor, { mode: 'greedy' }));
  for (const [group, tasks] of Object.entries(groups)) report(`exploration.greedy_success.${group}`, share(tasks, (id) => greedy.has(id)), `ratio (${tasks.length} train tasks)`);

  for (const temperature of TEMPERATURES) {
    const samples: Set<string>[] = [];
    for (let k = 0; k < SAMPLES; k++) {
      const seed = deriveSeed(SEED, 'exploration-sample', temperature, k);
      samples.push(await rollOut(`sample ${k + 1}/${SAMPLES} at temperature ${temperature}`, probe, () => createActorPolicy(actor, { mode: 'sample', temperature, seed })));
    }
    const anySample = (id: string) => samples.some((solved) => solved.has(id));
    const tag = `t${temperature}`;
    for (const [group, tasks] of Object.entries(groups)) report(`exploration.pass_at_k.${tag}.${group}`, share(tasks, anySample), `ratio (k=${SAMPLES}, ${tasks.length} train tasks)`);
    report(`exploration.sample_success.${tag}`, samples.reduce((sum, solved) => sum + solved.size, 0) / SAMPLES / probe.length, `ratio (${probe.length} train tasks)`);
    const found = probe.filter((t) => !greedy.has(String(t.task_id)) && anySample(String(t.task_id))).length;
    bench.push(`BENCH exploration.new_successes.${tag} ${found} tasks (greedy fails, one of ${SAMPLES} samples solves; of ${probe.length})`);
  }
} finally {
  await pool.close();
  await sites.stop();
  await rm(work, { recursive: true, force: true });
}
for (const line of bench) console.log(line);
