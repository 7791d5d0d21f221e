/**
 * `npm run bench:campaign`: campaigns on the embedded environment, side by side in one run.
 *   - learning curve: test-split success per phase, mean over seeds, curriculum on and off (ablation);
 *   - campaign.gain_over_sft: final phase minus SFT (curriculum on), in points;
 *   - campaign.curriculum_gain_minus_ablation: that gain minus the ablation's, in points;
 *   - campaign.rewarded_rollouts.{curriculum,ablation}: share of the RL phases' rollouts that were
 *     rewarded (by the ORM, or the evaluators with --reward evaluator), i.e. how much of a phase's
 *     experience can teach the actor anything;
 *   - campaign.overhead_ratio: campaign wall time / time during which at least one activity executed
 *     (parallel shards count once), i.e. what orchestration adds around the work.
 *   - campaign.test_tasks_{gained,lost}.{curriculum,ablation}: test tasks the final phase solves and SFT
 *     did not, and the reverse (mean over seeds): a net gain of 1 point can be 2 tasks gained or 12
 *     gained and 10 lost;
 *   - campaign.gain_over_sft.{curriculum,ablation}.{taught,untaught,heldout}: the gain on the test tasks
 *     of templates phase 0 demonstrated, of the other train templates, and of templates no train task
 *     has, in points of that group (mean over seeds), i.e. where a gain comes from.
 *   - campaign.history_max_events: the largest history of any run of a campaign of many tiny phases.
 * Each seed's ablation continues from its curriculum campaign's SFT phase (`--from`), so both arms
 * start from the same phase 0. Episodes are capped at --max-steps (12 here, WebRL uses 30) so that
 * the learning curves take about 50 minutes on 2 cores, and the 20-phase history run about 20 more.
 * `--reward evaluator` rewards rollouts by the tasks' evaluators instead of the ORM (campaign.reward),
 * which separates the ORM's errors from the rest of the loop.
 * `--first-seed` starts the seeds elsewhere than 1 (to add seeds to an earlier run's).
 * Usage: node --import tsx bench/campaign.ts [--seeds 3] [--first-seed 1] [--phases 3] [--tasks 30] [--test-tasks 40]
 *   [--demo-tasks 60] [--max-steps 12] [--history-phases 20] [--reward orm|evaluator]
 */
import { parseArgs } from 'node:util';
import { demonstrationTasks } from '../activities/campaign/demonstrationTasks';
import type { EvaluationResult } from '../activities/campaign/controlActivities';
import { campaignWorkflowId, startCampaign, type ForkPoint } from '../campaign/control';
import { readPhaseManifests } from '../campaign/manifest';
import type { Config } from '../config/campaignConfig';
import { parseConfig } from '../config/load';
import { generateSplits } from '../env/tasks/generate';
import { freePort } from '../infra/processes';
import { startTestStack } from '../test/harness/stack';
import { runWorkers } from '../workers/run';
import type { CampaignProgress } from '../workflows/campaignTypes';
import { TEMPLATE_GROUPS, templateGroupOf, type TemplateGroup } from './templateGroups';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '3' },
    'first-seed': { type: 'string', default: '1' },
    phases: { type: 'string', default: '3' },
    tasks: { type: 'string', default: '30' },
    'test-tasks': { type: 'string', default: '40' },
    'demo-tasks': { type: 'string', default: '60' },
    'max-steps': { type: 'string', default: '12' },
    'history-phases': { type: 'string', default: '20' },
    reward: { type: 'string', default: 'orm' },
  },
});
const seeds = Number(values.seeds);
const firstSeed = Number(values['first-seed']);
const phases = Number(values.phases);
const historyPhases = Number(values['history-phases']);
// With --phases 0 (SFT alone, e.g. to see what more demonstrations give) there is no ablation to fork.
const withAblation = phases > 0;

interface Interval {
  start: number;
  end: number;
}

/** Length of the union of intervals: time during which at least one activity ran. */
function covered(intervals: Interval[]): number {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  let total = 0;
  let current: Interval | undefined;
  for (const next of sorted) {
    if (!current || next.start > current.end) {
      if (current) total += current.end - current.start;
      current = { ...next };
    } else current.end = Math.max(current.end, next.end);
  }
  return total + (current ? current.end - current.start : 0);
}

const millis = (time: unknown) => {
  const t = time as { seconds?: { toNumber?: () => number } | number; nanos?: number } | undefined;
  const seconds = typeof t?.seconds === 'number' ? t.seconds : (t?.seconds?.toNumber?.() ?? 0);
  return seconds * 1000 + (t?.nanos ?? 0) / 1e6;
};

const stack = await startTestStack();
const client = await stack.client();
const sitePorts = { shopping: await freePort(), shopping_admin: await freePort(), reddit: await freePort(), gitlab: await freePort() };

function campaignConfig(name: string, seed: number, campaign: Record<string, unknown>) {
  // Screenshots (for the HTML report) cost time the bench is not about.
  const environment = { screenshotRate: 0, ...(campaign.environment as object | undefined) };
  return parseConfig({
    campaign: { name, seed, ...campaign, environment },
    stack: { dataDir: stack.dir, temporalPort: stack.config.stack.temporalPort, minioPort: stack.config.stack.minioPort },
    s3: { bucket: stack.config.s3.bucket },
    sites: { ports: sitePorts },
  });
}

/** Runs a campaign to the end; returns its progress, wall time and the time its activities covered. */
async function runCampaign(config: Config, from?: ForkPoint): Promise<{ result: CampaignProgress; wall: number; busy: number; maxEvents: number }> {
  const started = Date.now();
  const handle = await startCampaign(client, stack.store, config, from ? { from } : {});
  const result = (await client.workflow.getHandle(handle.workflowId).result()) as CampaignProgress;
  const wall = Date.now() - started;
  const intervals: Interval[] = [];
  let maxEvents = 0;
  for await (const run of client.workflow.list({ query: `WorkflowId = '${campaignWorkflowId(config.campaign.name)}'` })) {
    const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
    maxEvents = Math.max(maxEvents, history.events?.length ?? 0);
    const startedAt = new Map<string, number>();
    for (const event of history.events ?? []) {
      if (event.activityTaskStartedEventAttributes) startedAt.set(String(event.activityTaskStartedEventAttributes.scheduledEventId), millis(event.eventTime));
      const done = event.activityTaskCompletedEventAttributes;
      if (done) intervals.push({ start: startedAt.get(String(done.scheduledEventId))!, end: millis(event.eventTime) });
    }
  }
  return { result, wall, busy: covered(intervals), maxEvents };
}

/** Each test task's template group for this campaign's phase 0. */
function templateGroups(config: Config): Map<string, TemplateGroup> {
  const { worldSeed, demonstrationTasks: wanted } = config.campaign.environment;
  const splits = generateSplits(worldSeed);
  const groupOf = templateGroupOf(splits.train, demonstrationTasks(splits.train, wanted, config.campaign.seed));
  return new Map(splits.test.map((task) => [String(task.task_id), groupOf(task)]));
}

/** Which test tasks each published phase of a campaign solved (its evaluation, phase by phase). */
async function solvedPerPhase(name: string): Promise<Map<string, boolean>[]> {
  const manifests = await readPhaseManifests(stack.store, name);
  return Promise.all(
    manifests.map(async (manifest) => {
      const evaluation = await stack.store.getJson<EvaluationResult>(manifest.data.artifacts.evaluation);
      return new Map(evaluation.tasks.map((task) => [task.taskId, task.score > 0]));
    }),
  );
}

interface Turnover {
  gained: number;
  lost: number;
  /** Per template group: tasks evaluated, solved at SFT, solved at the final phase. */
  groups: Record<TemplateGroup, { tasks: number; sft: number; final: number }>;
}

/** Final phase against SFT, task by task. */
function turnover(phases: Map<string, boolean>[], groups: Map<string, TemplateGroup>): Turnover {
  const sft = phases[0]!;
  const final = phases[phases.length - 1]!;
  const empty = () => ({ tasks: 0, sft: 0, final: 0 });
  const result: Turnover = { gained: 0, lost: 0, groups: Object.fromEntries(TEMPLATE_GROUPS.map((group) => [group, empty()])) as Turnover['groups'] };
  for (const [taskId, solvedAtSft] of sft) {
    const solvedAtEnd = final.get(taskId) ?? false;
    if (solvedAtEnd && !solvedAtSft) result.gained++;
    if (solvedAtSft && !solvedAtEnd) result.lost++;
    const group = result.groups[groups.get(taskId)!];
    group.tasks++;
    group.sft += Number(solvedAtSft);
    group.final += Number(solvedAtEnd);
  }
  return result;
}

const curves: Record<'on' | 'off', number[][]> = { on: [], off: [] };
const turnovers: Record<'on' | 'off', Turnover[]> = { on: [], off: [] };
// Rewarded and all rollouts of the RL phases (phase 0 probes train tasks for both arms).
const rewarded: Record<'on' | 'off', { successes: number; trajectories: number }> = {
  on: { successes: 0, trajectories: 0 },
  off: { successes: 0, trajectories: 0 },
};
let wall = 0;
let busy = 0;
let historyEvents = 0;
// One all-in-one worker for every campaign: activities read each campaign's own frozen config.
const stop = new AbortController();
const workers = runWorkers({ config: campaignConfig('bench-worker', 1, {}), secrets: stack.secrets }, ['control', 'browser', 'train'], stop.signal);
try {
  const phase = { tasksPerPhase: Number(values.tasks) };
  const environment = { testTasks: Number(values['test-tasks']), demonstrationTasks: Number(values['demo-tasks']), maxSteps: Number(values['max-steps']) };
  for (let seed = firstSeed; seed < firstSeed + seeds; seed++) {
    // The ablation continues from the curriculum campaign's SFT phase: the same phase 0, computed once.
    const curriculumName = `bench-curriculum-${seed}`;
    for (const curriculum of withAblation ? [true, false] : [true]) {
      const name = curriculum ? curriculumName : `bench-ablation-${seed}`;
      const config = campaignConfig(name, seed, { phases, phase: { ...phase, curriculum }, environment, reward: values.reward });
      const run = await runCampaign(config, curriculum ? undefined : { campaign: curriculumName, phase: 0 });
      wall += run.wall;
      busy += run.busy;
      const curve = run.result.history.map((h) => h.successRate);
      const arm = curriculum ? 'on' : 'off';
      curves[arm].push(curve);
      turnovers[arm].push(turnover(await solvedPerPhase(name), templateGroups(config)));
      const rlPhases = run.result.history.filter((h) => h.phase > 0);
      for (const h of rlPhases) {
        rewarded[arm].successes += h.rolloutSuccesses;
        rewarded[arm].trajectories += h.trajectories;
      }
      const yields = rlPhases.map((h) => `${h.rolloutSuccesses}/${h.trajectories}`).join(', ');
      console.log(
        `${name}: ${curve.map((r) => `${(100 * r).toFixed(1)}%`).join(' -> ')} (${(run.wall / 1000).toFixed(0)} s)${yields ? `; rewarded rollouts ${yields}` : ''}`,
      );
    }
  }
  if (historyPhases > 0) {
    // History bound: many tiny phases; continue-as-new keeps every run's history small.
    const config = campaignConfig('bench-history', 1, {
      phases: historyPhases,
      phase: { tasksPerPhase: 2, rolloutShardSize: 1, criticBand: [0, 1] },
      environment: { testTasks: 2, demonstrationTasks: 4, maxSteps: 4 },
      training: { sftEpochs: 1, ormEpochs: 1, criticEpochs: 1, actorEpochs: 1 },
    });
    const run = await runCampaign(config);
    historyEvents = run.maxEvents;
    console.log(`bench-history: ${run.result.history.length} phases in ${(run.wall / 1000).toFixed(0)} s, largest run history ${historyEvents} events`);
  }
} finally {
  stop.abort();
  await workers;
  await stack.stop();
}
if (seeds > 0) {
  const meanCurve = (runs: number[][]) => runs[0]!.map((_, phase) => runs.reduce((sum, run) => sum + run[phase]!, 0) / runs.length);
  const on = meanCurve(curves.on);
  const off = withAblation ? meanCurve(curves.off) : [];
  const percent = (rate: number | undefined, width: number) => (rate === undefined ? '-' : `${(100 * rate).toFixed(1)}%`).padStart(width);
  console.log('\nphase  curriculum  ablation');
  on.forEach((rate, phase) => console.log(`${String(phase).padStart(5)}  ${percent(rate, 10)}  ${percent(off[phase], 8)}`));
  on.forEach((rate, phase) => console.log(`BENCH campaign.success.curriculum.phase${phase} ${(100 * rate).toFixed(2)} %`));
  off.forEach((rate, phase) => console.log(`BENCH campaign.success.ablation.phase${phase} ${(100 * rate).toFixed(2)} %`));
  if (withAblation) {
    const gainOn = 100 * (on[on.length - 1]! - on[0]!);
    const gainOff = 100 * (off[off.length - 1]! - off[0]!);
    console.log(`BENCH campaign.gain_over_sft ${gainOn.toFixed(2)} points`);
    console.log(`BENCH campaign.curriculum_gain_minus_ablation ${(gainOn - gainOff).toFixed(2)} points`);
    const share = ({ successes, trajectories }: { successes: number; trajectories: number }) =>
      (trajectories ? (100 * successes) / trajectories : 0).toFixed(2);
    console.log(`BENCH campaign.rewarded_rollouts.curriculum ${share(rewarded.on)} %`);
    console.log(`BENCH campaign.rewarded_rollouts.ablation ${share(rewarded.off)} %`);
    const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length;
    for (const [arm, label] of [
      ['on', 'curriculum'],
      ['off', 'ablation'],
    ] as const) {
      const runs = turnovers[arm];
      console.log(`BENCH campaign.test_tasks_gained.${label} ${mean(runs.map((t) => t.gained)).toFixed(1)} tasks`);
      console.log(`BENCH campaign.test_tasks_lost.${label} ${mean(runs.map((t) => t.lost)).toFixed(1)} tasks`);
      for (const group of TEMPLATE_GROUPS) {
        const counts = runs.map((t) => t.groups[group]);
        const gain = mean(counts.map((c) => (c.tasks ? (100 * (c.final - c.sft)) / c.tasks : 0)));
        const sizes = [...new Set(counts.map((c) => c.tasks))].join('/');
        console.log(`BENCH campaign.gain_over_sft.${label}.${group} ${gain.toFixed(2)} points (${sizes} test tasks)`);
      }
    }
  }
  console.log(`BENCH campaign.overhead_ratio ${(wall / busy).toFixed(3)} x`);
}
if (historyPhases > 0) console.log(`BENCH campaign.history_max_events.phases${historyPhases} ${historyEvents} events`);
