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
 * With --ceiling it also bounds what experience on train tasks could add, whoever finds it: the
 * oracle demonstrates train tasks, the actor is retrained as phase 0 trains it on its demonstrations
 * plus those, and each actor runs greedy on the whole test split, split into tasks of taught
 * templates, of untaught train templates, and of templates no train task has (about 55 more minutes
 * on 2 cores):
 *   - exploration.ceiling.sft: the phase-0 actor;
 *   - exploration.ceiling.failures_navigation: plus the oracle's steps on the probe tasks the greedy
 *     actor failed, up to its first arrival on the page where the task ends (the navigation alone);
 *   - exploration.ceiling.failures_stepping_stones: the same steps as tasks of their own, "Open the
 *     "<heading>" page" ending in an exit there: what navigation tasks made from a failed task's path
 *     teach under their own wording;
 *   - exploration.ceiling.failures_prefix: plus every step of those tasks but the last (the
 *     navigation and the work on the final page, without the closing exit);
 *   - exploration.ceiling.failures_full: plus every step of those tasks: a phase that solved every
 *     probe task it failed;
 *   - exploration.ceiling.taught_templates: plus every train task of the taught templates.
 * Run: node --import tsx bench/exploration.ts [--seed 1] [--demo-tasks 60] [--probe-tasks 90]
 *   [--samples 4] [--temperatures 1,2] [--max-steps 12] [--concurrency 2] [--ceiling]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { demonstrationTasks } from '../activities/campaign/demonstrationTasks';
import { createOraclePolicy } from '../browser/policies/oracle';
import type { Policy } from '../browser/policies/policy';
import { formatAction } from '../browser/grammar';
import { BrowserPool } from '../browser/pool';
import { deriveSeed } from '../browser/rng';
import { EMBEDDED_EPOCHS, TrainingSchema } from '../config/schema';
import { EmbeddedEnvironment, toEpisodeTask } from '../env/embedded';
import { startEmbeddedSites } from '../env/embeddedSites';
import { Rng } from '../env/random';
import { generateSplits } from '../env/tasks/generate';
import type { WebArenaTask } from '../env/tasks/schema';
import { DONE } from '../env/tasks/template';
import { Actor } from '../models/actor';
import { createActorPolicy } from '../models/actorPolicy';
import { loadModel } from '../models/checkpoint';
import { canonicalObservation } from '../models/htmlObservation';
import type { EpisodeRound } from '../models/orm';
import { recordingPolicy } from '../models/recordingPolicy';
import { train } from '../models/train/trainer';
import { TEMPLATE_GROUPS, templateGroupOf } from './templateGroups';

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
    ceiling: { type: 'boolean', default: false },
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
const { train: trainSplit, test: testSplit } = generateSplits(WORLD_SEED);
const environment = new EmbeddedEnvironment({ siteUrls: sites.urls, tasks: [...trainSplit, ...testSplit] });
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

/** The oracle's rounds (state, reply) on each task it solves, by task id, in task order (training reads them in this order). */
async function demonstrate(label: string, tasks: readonly WebArenaTask[]): Promise<Map<string, EpisodeRound[]>> {
  const recorders = new Map(tasks.map((t) => [String(t.task_id), recordingPolicy(createOraclePolicy())]));
  const solved = await rollOut(label, tasks, (t) => recorders.get(String(t.task_id))!.policy);
  return new Map(tasks.filter((t) => solved.has(String(t.task_id))).map((t) => [String(t.task_id), recorders.get(String(t.task_id))!.rounds]));
}

/** Trains the actor as a campaign's phase 0 does (its epochs and batch size) on these rounds. */
async function trainActor(name: string, records: readonly EpisodeRound[]): Promise<Actor> {
  const outPath = join(work, `${name}.onnx`);
  await train({
    objective: 'actor-sft',
    data: { records: [...records] },
    outPath,
    seed: SEED,
    epochs: EMBEDDED_EPOCHS.sftEpochs,
    batchSize: training.batchSize,
  });
  return new Actor(await loadModel(outPath, { kind: 'actor' }));
}

const pagePath = (round: EpisodeRound) => new URL(canonicalObservation(round.state.observation).url).pathname;

/** The round at which the episode first reaches the page (URL path) of its last round: its navigation ends there. */
function arrivalAtFinalPage(rounds: readonly EpisodeRound[]): number {
  const final = rounds.at(-1);
  if (!final) return -1;
  const finalPath = pagePath(final);
  return rounds.findIndex((round) => pagePath(round) === finalPath);
}

/**
 * A failed task's navigation as a task of its own: "Open the "<heading>" page" (a page without a
 * heading is named by the task's longest slot value, a product's page by the product), ending in an
 * exit on arrival.
 */
function steppingStone(task: WebArenaTask, rounds: readonly EpisodeRound[]): EpisodeRound[] {
  const arrival = arrivalAtFinalPage(rounds);
  if (arrival <= 0) return [];
  const destination = rounds[arrival]!.state;
  const heading = canonicalObservation(destination.observation).title;
  const slot =
    Object.values(task.instantiation_dict ?? {})
      .map(String)
      .sort((a, b) => b.length - a.length)[0] ?? '';
  const intent = heading ? `Open the "${heading}" page` : `Open the page of ${slot}`;
  const relabel = (round: EpisodeRound): EpisodeRound => ({ ...round, state: { ...round.state, intent } });
  return [...rounds.slice(0, arrival).map(relabel), { state: { ...destination, intent }, response: formatAction({ kind: 'exit', message: DONE }) }];
}

const bench: string[] = [];
const report = (name: string, value: number, unit: string) => bench.push(`BENCH ${name} ${value.toFixed(3)} ${unit}`);

try {
  // Phase 0 of a campaign with this seed: the same demonstration sample, epochs and batch size.
  const demoTasks = demonstrationTasks(trainSplit, Number(flags['demo-tasks']), SEED);
  const records = [...(await demonstrate('oracle demonstrations', demoTasks)).values()].flat();
  const actor = await trainActor('actor-sft', records);

  const demoIds = new Set(demoTasks.map((t) => t.task_id));
  const groupOf = templateGroupOf(trainSplit, demoTasks);
  const probe = new Rng(SEED).fork('exploration-probe').sample(
    trainSplit.filter((t) => !demoIds.has(t.task_id)),
    Number(flags['probe-tasks']),
  );
  const groups = {
    taught: probe.filter((t) => groupOf(t) === 'taught'),
    untaught: probe.filter((t) => groupOf(t) === 'untaught'),
  };
  log(
    `${demoTasks.length} demonstration tasks on ${new Set(demoTasks.map((t) => t.intent_template_id)).size} templates; probe: ${groups.taught.length} tasks on taught templates, ${groups.untaught.length} on untaught ones`,
  );
  const share = (tasks: readonly WebArenaTask[], solved: (id: string) => boolean) =>
    tasks.filter((t) => solved(String(t.task_id))).length / Math.max(1, tasks.length);

  const greedy = await rollOut('greedy', probe, () => createActorPolicy(actor, { mode: 'greedy' }));
  for (const [group, tasks] of Object.entries(groups))
    report(
      `exploration.greedy_success.${group}`,
      share(tasks, (id) => greedy.has(id)),
      `ratio (${tasks.length} train tasks)`,
    );

  for (const temperature of TEMPERATURES) {
    const samples: Set<string>[] = [];
    for (let k = 0; k < SAMPLES; k++) {
      const seed = deriveSeed(SEED, 'exploration-sample', temperature, k);
      samples.push(
        await rollOut(`sample ${k + 1}/${SAMPLES} at temperature ${temperature}`, probe, () => createActorPolicy(actor, { mode: 'sample', temperature, seed })),
      );
    }
    const anySample = (id: string) => samples.some((solved) => solved.has(id));
    const tag = `t${temperature}`;
    for (const [group, tasks] of Object.entries(groups))
      report(`exploration.pass_at_k.${tag}.${group}`, share(tasks, anySample), `ratio (k=${SAMPLES}, ${tasks.length} train tasks)`);
    report(
      `exploration.sample_success.${tag}`,
      samples.reduce((sum, solved) => sum + solved.size, 0) / SAMPLES / probe.length,
      `ratio (${probe.length} train tasks)`,
    );
    const found = probe.filter((t) => !greedy.has(String(t.task_id)) && anySample(String(t.task_id))).length;
    bench.push(`BENCH exploration.new_successes.${tag} ${found} tasks (greedy fails, one of ${SAMPLES} samples solves; of ${probe.length})`);
  }

  if (flags.ceiling) {
    const testGroups = TEMPLATE_GROUPS.map((group) => [group, testSplit.filter((t) => groupOf(t) === group)] as const);
    const failed = probe.filter((t) => !greedy.has(String(t.task_id)));
    const taughtTrainTasks = trainSplit.filter((t) => groupOf(t) === 'taught' && !demoIds.has(t.task_id));
    const wanted = [...new Map([...failed, ...taughtTrainTasks].map((t) => [t.task_id, t])).values()];
    const demonstrations = await demonstrate('oracle on the failed probe tasks and the taught templates', wanted);
    const roundsOf = (tasks: readonly WebArenaTask[], keep: (rounds: EpisodeRound[], task: WebArenaTask) => EpisodeRound[]) =>
      tasks.flatMap((t) => keep(demonstrations.get(String(t.task_id)) ?? [], t));
    const actors: [string, string, () => Promise<Actor>][] = [
      ['sft', `${demoTasks.length} demonstration tasks`, async () => actor],
      [
        'failures_navigation',
        `those and the ${failed.length} failed probe tasks up to their final page`,
        () => trainActor('failures-navigation', [...records, ...roundsOf(failed, (r) => r.slice(0, Math.max(0, arrivalAtFinalPage(r))))]),
      ],
      [
        'failures_stepping_stones',
        `those and the ${failed.length} failed probe tasks' navigation as "Open the ... page" tasks`,
        () => trainActor('failures-stepping-stones', [...records, ...roundsOf(failed, (r, t) => steppingStone(t, r))]),
      ],
      [
        'failures_prefix',
        `those and the ${failed.length} failed probe tasks but their last step`,
        () => trainActor('failures-prefix', [...records, ...roundsOf(failed, (r) => r.slice(0, -1))]),
      ],
      ['failures_full', `those and the ${failed.length} failed probe tasks`, () => trainActor('failures-full', [...records, ...roundsOf(failed, (r) => r)])],
      [
        'taught_templates',
        `those and ${taughtTrainTasks.length} more train tasks of the taught templates`,
        () => trainActor('taught-templates', [...records, ...roundsOf(taughtTrainTasks, (r) => r)]),
      ],
    ];
    for (const [name, trainedOn, load] of actors) {
      const candidate = await load();
      const solved = await rollOut(`${name}: greedy on the test split`, testSplit, () => createActorPolicy(candidate, { mode: 'greedy' }));
      report(
        `exploration.ceiling.${name}`,
        share(testSplit, (id) => solved.has(id)),
        `ratio (${testSplit.length} test tasks; trained on ${trainedOn})`,
      );
      for (const [group, tasks] of testGroups)
        report(
          `exploration.ceiling.${name}.${group}`,
          share(tasks, (id) => solved.has(id)),
          `ratio (${tasks.length} test tasks)`,
        );
    }
  }
} finally {
  await pool.close();
  await sites.stop();
  await rm(work, { recursive: true, force: true });
}
for (const line of bench) console.log(line);
