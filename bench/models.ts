/**
 * The models on the embedded environment, end to end through the browser side's pool and episode loop:
 *
 * 1. Oracle rollouts on train tasks (a few per template) give the SFT demonstrations; noisy-oracle
 *    rollouts on other train tasks (a random candidate instead of the plan's step with probability
 *    0.15, 0.3 or 0.5, by task) add failures.
 * 2. SFT actor: success on the whole embedded test split, greedy, next to the random policy (on a
 *    sample of the test split) and the oracle.
 * 3. ORM: trained on the train-task trajectories (oracle, noisy oracle, and the SFT actor's own
 *    rollouts sampled at temperature 0.5 on the noisy-oracle tasks, as WebRL trains its ORM on the
 *    agent's labelled trajectories), accuracy against the evaluator's labels on the held-out
 *    (test-task) trajectories of step 2 (SFT + oracle + random), overall, per policy, and split by
 *    whether the task's template had train tasks (held-out templates have none); each figure is the
 *    mean over --orm-seeds ORM training runs on the same trajectories (its unit gives the range). Each
 *    ORM judges with the unseen-task-type correction its training chose by cross-validation on the
 *    train trajectories alone (models/train/unseenTypeCalibration.ts); the offset is reported.
 * 4. Critic: trained on Monte-Carlo-return labels (gamma 0.9) of the train-task trajectories, ROC AUC
 *    on the held-out states.
 * 5. Batched onnxruntime throughput of the actor (candidate rows/s, featurizing excluded) and of the
 *    critic (states/s); training time per 1,000 steps of each objective (measured over the real runs).
 *
 * Run: node --import tsx bench/models.ts [--demos-per-template 3] [--noisy-per-template 6]
 *   [--random-tasks 40] [--test-tasks 0 = all] [--concurrency 2] [--max-steps 12] [--seed 2411]
 *   [--orm-seeds 8]
 * Ends with one `BENCH <name> <value> <unit>` line per figure; progress goes to stderr.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { EpisodeResult } from '../browser/episode';
import { createOraclePolicy } from '../browser/policies/oracle';
import { buildPrompt } from '../browser/policies/prompt';
import type { Policy, PolicyTask } from '../browser/policies/policy';
import { createRandomPolicy } from '../browser/policies/random';
import { BrowserPool } from '../browser/pool';
import { EmbeddedEnvironment, toEpisodeTask } from '../env/embedded';
import { startEmbeddedSites } from '../env/embeddedSites';
import { generateSplits } from '../env/tasks/generate';
import type { WebArenaTask } from '../env/tasks/schema';
import { Actor, candidateBatch } from '../models/actor';
import { CALIBRATION_FITS } from '../models/train/unseenTypeCalibration';
import { createActorPolicy } from '../models/actorPolicy';
import { buildCandidates } from '../models/candidates';
import { loadModel } from '../models/checkpoint';
import { Critic } from '../models/critic';
import { featurizeStates } from '../models/featurizer';
import { accuracy, rocAuc } from '../models/metrics';
import { Orm, outcomeState } from '../models/orm';
import { recordingPolicy } from '../models/recordingPolicy';
import { SeededRng, deriveSeed } from '../browser/rng';
import type { ModelState } from '../models/state';
import type { Objective } from '../models/train/trainerContract';
import { train, type TrainingJob } from '../models/train/trainer';

const { values: flags } = parseArgs({
  options: {
    'demos-per-template': { type: 'string', default: '3' },
    'noisy-per-template': { type: 'string', default: '6' },
    'random-tasks': { type: 'string', default: '40' },
    'test-tasks': { type: 'string', default: '0' },
    concurrency: { type: 'string', default: '2' },
    'max-steps': { type: 'string', default: '12' },
    seed: { type: 'string', default: '2411' },
    'orm-seeds': { type: 'string', default: '8' },
  },
});
const DEMOS_PER_TEMPLATE = Number(flags['demos-per-template']);
const NOISY_PER_TEMPLATE = Number(flags['noisy-per-template']);
const RANDOM_TASKS = Number(flags['random-tasks']);
/** 0: the whole test split. */
const TEST_TASKS = Number(flags['test-tasks']);
const CONCURRENCY = Number(flags.concurrency);
const MAX_STEPS = Number(flags['max-steps']);
const SEED = Number(flags.seed);
const ORM_SEEDS = Number(flags['orm-seeds']);

const log = (message: string) => process.stderr.write(`[bench/models] ${message}\n`);
const bench: string[] = [];
const report = (name: string, value: number, unit: string, digits = 3) => bench.push(`BENCH ${name} ${value.toFixed(digits)} ${unit}`);

interface Trajectory {
  task: WebArenaTask;
  /** The state each action was chosen in, and the raw action. */
  steps: { state: ModelState; response: string }[];
  /** The outcome state: every action with its target, the last observation. */
  final: ModelState;
  success: boolean;
}

const NOISE_LEVELS = [0.15, 0.3, 0.5];

/** The oracle's plan, except that with probability `noise` (by task) a step is a random candidate (seeded per task and round). */
function noisyOracle(seed: number): Policy {
  const oracle = createOraclePolicy();
  return {
    name: 'noisy-oracle',
    async act(input) {
      const noise = NOISE_LEVELS[deriveSeed(seed, input.task.task_id) % NOISE_LEVELS.length]!;
      const rng = new SeededRng(deriveSeed(seed, input.task.task_id, input.history.length));
      if (rng.next() >= noise) return oracle.act(input);
      const candidates = buildCandidates(input.task.intent, input.observation);
      const prompt = buildPrompt(
        input.task.intent,
        input.history.map((round) => round.response),
        input.observation.html,
      );
      return { response: candidates[Math.floor(rng.next() * candidates.length)]!.key, prompt };
    },
  };
}

const sites = await startEmbeddedSites({ seed: SEED });
const generated = generateSplits(SEED);
const splits = { train: generated.train, test: TEST_TASKS > 0 ? generated.test.slice(0, TEST_TASKS) : generated.test };
const environment = new EmbeddedEnvironment({ siteUrls: sites.urls, tasks: [...splits.train, ...splits.test] });
const pool = await BrowserPool.start({ size: CONCURRENCY });
const work = await mkdtemp(join(tmpdir(), 'bench-models-'));

async function rollouts(label: string, tasks: readonly WebArenaTask[], policy: (task: WebArenaTask) => Policy): Promise<Trajectory[]> {
  const started = performance.now();
  const recorded = new Map<string, Trajectory['steps']>();
  const requests = tasks.map((task) => {
    const recorder = recordingPolicy(policy(task));
    recorded.set(String(task.task_id), recorder.rounds);
    const episodeTask: PolicyTask = toEpisodeTask(task, sites.urls);
    return { task: episodeTask, policy: recorder.policy, environment, options: { maxSteps: MAX_STEPS } };
  });
  // The pool reports in completion order; task order keeps the training data, and so the weights, seeded.
  const order = new Map(tasks.map((task, index) => [String(task.task_id), index]));
  const indexOf = (result: EpisodeResult) => order.get(String(result.outcome.taskId))!;
  const results: EpisodeResult[] = (await pool.runAll(requests)).sort((a, b) => indexOf(a) - indexOf(b));
  const trajectories: Trajectory[] = [];
  let infra = 0;
  for (const result of results) {
    if (result.outcome.infraFailure) {
      infra++;
      continue;
    }
    const task = tasks[indexOf(result)]!;
    const steps = recorded.get(String(task.task_id))!;
    const final = outcomeState(task.intent, steps);
    if (!final) continue;
    trajectories.push({ task, steps, final, success: result.outcome.score === 1 });
  }
  const seconds = (performance.now() - started) / 1000;
  const solved = trajectories.filter((t) => t.success).length;
  log(`${label}: ${trajectories.length} episodes (${infra} infrastructure failures), ${solved} solved, ${seconds.toFixed(0)} s`);
  return trajectories;
}

/** `perTemplate` tasks of each template, in split order (the split is already a seeded shuffle). */
function perTemplate(tasks: readonly WebArenaTask[], count: number, skip = 0): WebArenaTask[] {
  const seen = new Map<number, number>();
  return tasks.filter((task) => {
    const n = seen.get(task.intent_template_id ?? -1) ?? 0;
    seen.set(task.intent_template_id ?? -1, n + 1);
    return n >= skip && n < skip + count;
  });
}

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
const successRate = (trajectories: readonly Trajectory[]) => trajectories.filter((t) => t.success).length / Math.max(1, trajectories.length);

function mcReturns(trajectory: Trajectory): number[] {
  const reward = trajectory.success ? 1 : 0;
  return trajectory.steps.map((_, t) => reward * 0.9 ** (trajectory.steps.length - 1 - t));
}

/**
 * Trains in-process, timing the training steps alone (not loading, featurizing up front or saving), and
 * an ORM's unseen-type calibration (from the last step to saving) apart.
 */
async function timedTrain(job: TrainingJob): Promise<{ secondsPer1000: number; calibrationSeconds: number; metrics: Record<string, number> }> {
  let first = 0;
  let last = 0;
  let firstStep = 0;
  let lastStep = 0;
  let calibrationSeconds = 0;
  const result = await train(job, {
    onProgress: (progress) => {
      if (progress.phase === 'saving' && last > 0) calibrationSeconds = (performance.now() - last) / 1000;
      if (progress.phase !== 'training') return;
      if (first === 0) {
        first = performance.now();
        firstStep = progress.step;
      }
      last = performance.now();
      lastStep = progress.step;
    },
  });
  const steps = Math.max(1, lastStep - firstStep);
  return { secondsPer1000: ((last - first) / steps / 1000) * 1000, calibrationSeconds, metrics: result.metrics };
}

const outPath = (objective: Objective) => join(work, `${objective}.onnx`);

try {
  log(`splits: ${splits.train.length} train, ${splits.test.length} test tasks`);
  const demoTasks = perTemplate(splits.train, DEMOS_PER_TEMPLATE);
  const noisyTasks = perTemplate(splits.train, NOISY_PER_TEMPLATE, DEMOS_PER_TEMPLATE);
  const oracleTrain = await rollouts('oracle on train tasks', demoTasks, () => createOraclePolicy());
  const noisyTrain = await rollouts('noisy oracle on train tasks', noisyTasks, () => noisyOracle(SEED));

  const demonstrations = oracleTrain.filter((t) => t.success).flatMap((t) => t.steps);
  const sft = await timedTrain({
    objective: 'actor-sft',
    data: { records: demonstrations },
    outPath: outPath('actor-sft'),
    seed: SEED,
    epochs: 6,
    batchSize: 16,
  });
  log(`SFT: ${demonstrations.length} demonstrations, metrics ${JSON.stringify(sft.metrics)}`);
  const actor = new Actor(await loadModel(outPath('actor-sft'), { kind: 'actor' }));

  const sftTrain = await rollouts('SFT actor (sampled) on train tasks', noisyTasks, () =>
    createActorPolicy(actor, { mode: 'sample', temperature: 0.5, seed: SEED }),
  );
  const sftTest = await rollouts('SFT actor (greedy) on the test split', splits.test, () => createActorPolicy(actor, { mode: 'greedy' }));
  const oracleTest = await rollouts('oracle on the test split', splits.test, () => createOraclePolicy());
  const randomTest = await rollouts('random policy on test tasks', splits.test.slice(0, RANDOM_TASKS), () => createRandomPolicy({ seed: SEED }));
  report('models.actor.sft_test_success', successRate(sftTest), `ratio (${sftTest.length} test tasks)`);
  report('models.actor.random_test_success', successRate(randomTest), `ratio (${randomTest.length} test tasks)`);
  report('models.actor.oracle_test_success', successRate(oracleTest), `ratio (${oracleTest.length} test tasks)`);
  report('models.actor.sft_demo_coverage', sft.metrics.coveredDemonstrations ?? 0, 'ratio (demonstrated actions among the candidates)');

  const trainTrajectories = [...oracleTrain, ...noisyTrain, ...sftTrain];
  const heldOut = [...sftTest, ...oracleTest, ...randomTest];
  // One ORM training run moves held-out accuracy by a few points from seed to seed (the held-out
  // templates most), so the figures are means over ORM_SEEDS runs on the same trajectories.
  const trainedTemplates = new Set(trainTrajectories.map((t) => t.task.intent_template_id));
  const policyOf = [...sftTest.map(() => 'sft'), ...oracleTest.map(() => 'oracle'), ...randomTest.map(() => 'random')];
  const groups: [string, (t: Trajectory, i: number) => boolean][] = [
    ['', () => true],
    ...['sft', 'oracle', 'random'].map((policy): [string, (t: Trajectory, i: number) => boolean] => [`.${policy}`, (_, i) => policyOf[i] === policy]),
    // Held-out templates have no train tasks: there the ORM judges a task type it never saw.
    ['.seen_templates', (t) => trainedTemplates.has(t.task.intent_template_id)],
    ['.unseen_templates', (t) => !trainedTemplates.has(t.task.intent_template_id)],
  ];
  // Each group's held-out trajectories (indices into heldOut), fixed across the ORM runs.
  const members = groups.map(([name, member]): [string, number[]] => [name, heldOut.flatMap((t, i) => (member(t, i) ? [i] : []))]);
  const scores = new Map<string, number[]>(groups.map(([name]) => [name, []]));
  let orm: Awaited<ReturnType<typeof timedTrain>> | undefined;
  const calibrations: Record<string, number>[] = [];
  for (let k = 0; k < ORM_SEEDS; k++) {
    const run = await timedTrain({
      objective: 'orm',
      data: { records: trainTrajectories.map((t) => ({ state: t.final, success: t.success })) },
      outPath: outPath('orm'),
      seed: deriveSeed(SEED, 'orm', k),
      epochs: 3,
      batchSize: 16,
    });
    orm ??= run;
    calibrations.push(run.metrics);
    const verdicts = await new Orm(await loadModel(outPath('orm'), { kind: 'orm' })).judge(heldOut.map((t) => t.final));
    for (const [name, picked] of members) {
      scores.get(name)!.push(
        accuracy(
          picked.map((i) => verdicts[i]!.pYes),
          picked.map((i) => heldOut[i]!.success),
        ),
      );
    }
  }
  for (const [name, indices] of members) {
    const picked = indices.map((i) => heldOut[i]!);
    const runs = scores.get(name)!;
    const spread = `${Math.min(...runs).toFixed(3)}-${Math.max(...runs).toFixed(3)}`;
    report(
      `models.orm.heldout_accuracy${name}`,
      mean(runs),
      `ratio (${picked.length} held-out trajectories, ${picked.filter((t) => t.success).length} successful; mean of ${ORM_SEEDS} ORM seeds, ${spread})`,
    );
  }
  // The unseen-type correction each ORM run chose by cross-validation on its train trajectories.
  const offsets = calibrations.map((m) => m.unseenTypeLogitOffset ?? 0);
  report('models.orm.unseen_type_logit_offset', mean(offsets), `logit (mean of ${ORM_SEEDS} ORM seeds, ${Math.min(...offsets)}-${Math.max(...offsets)})`, 2);
  const cvUnit = `ratio (train trajectories judged by fold models that never saw their task type; mean of ${ORM_SEEDS} ORM seeds)`;
  report('models.orm.unseen_type_cv_accuracy.uncorrected', mean(calibrations.map((m) => m.unseenTypeCvAccuracy ?? 0)), cvUnit);
  report('models.orm.unseen_type_cv_accuracy.corrected', mean(calibrations.map((m) => m.unseenTypeCvAccuracyCalibrated ?? 0)), cvUnit);

  const critic = await timedTrain({
    objective: 'critic',
    data: { records: trainTrajectories.flatMap((t) => t.steps.map((step, i) => ({ state: step.state, mcReturn: mcReturns(t)[i]! }))) },
    outPath: outPath('critic'),
    seed: SEED,
    epochs: 2,
    batchSize: 16,
  });
  const heldOutStates = heldOut.flatMap((t) => t.steps.map((step, i) => ({ state: step.state, positive: mcReturns(t)[i]! > 0 })));
  const criticModel = new Critic(await loadModel(outPath('critic'), { kind: 'critic' }));
  const values = await criticModel.values(heldOutStates.map((s) => s.state));
  report(
    'models.critic.heldout_roc_auc',
    rocAuc(
      values.map((v) => v.value),
      heldOutStates.map((s) => s.positive),
    ),
    `auc (${heldOutStates.length} held-out states)`,
  );

  // Throughput: the engines alone, on real observations (featurized once up front).
  const states = heldOutStates.slice(0, 64).map((s) => s.state);
  const { batch } = candidateBatch(states);
  await actor.model.engine.run(batch);
  let runs = 0;
  const actorStart = performance.now();
  while (performance.now() - actorStart < 3000 || runs < 3) {
    await actor.model.engine.run(batch);
    runs++;
  }
  report(
    'models.onnx.actor_candidates_per_s',
    (batch.rows * runs) / ((performance.now() - actorStart) / 1000),
    `candidates/s (batches of ${batch.rows} candidate rows, 1 thread)`,
    0,
  );
  const stateBatch = featurizeStates(heldOutStates.slice(0, 256).map((s) => s.state));
  runs = 0;
  const criticStart = performance.now();
  while (performance.now() - criticStart < 2000 || runs < 3) {
    await criticModel.model.engine.run(stateBatch);
    runs++;
  }
  report(
    'models.onnx.critic_states_per_s',
    (stateBatch.rows * runs) / ((performance.now() - criticStart) / 1000),
    `states/s (batches of ${stateBatch.rows}, 1 thread)`,
    0,
  );

  report('models.train.actor_sft_s_per_1000_steps', sft.secondsPer1000, 's (batch 16 states)', 1);
  report('models.train.critic_s_per_1000_steps', critic.secondsPer1000, 's (batch 16 states)', 1);
  report('models.train.orm_s_per_1000_steps', orm!.secondsPer1000, 's (batch 16 rows: trajectories with or without their task type)', 1);
  report('models.train.orm_calibration_s', orm!.calibrationSeconds, `s (per ORM run: the unseen-type cross-validation's ${CALIBRATION_FITS} fold models)`, 1);

  const reference = outPath('actor-sft');
  const webrlSteps = trainTrajectories.flatMap((t) =>
    t.steps.map((step, i) => ({
      state: step.state,
      response: step.response,
      nextState: t.steps[i + 1]?.state ?? null,
      reward: i === t.steps.length - 1 && t.success ? 1 : 0,
      mcReturn: mcReturns(t)[i]!,
    })),
  );
  const webrl = await timedTrain({
    objective: 'actor-webrl',
    data: { records: webrlSteps },
    outPath: outPath('actor-webrl'),
    reference,
    critic: outPath('critic'),
    seed: SEED,
    steps: 200,
    batchSize: 16,
  });
  report('models.train.actor_webrl_s_per_1000_steps', webrl.secondsPer1000, 's (batch 16 states)', 1);
} finally {
  await pool.close();
  await sites.stop();
  await rm(work, { recursive: true, force: true });
}
console.log(bench.join('\n'));
