/**
 * `npm run bench:campaign`: campaigns on the embedded environment, side by side in one run.
 *   - learning curve: test-split success per phase, mean over seeds, curriculum on and off (ablation);
 *   - campaign.gain_over_sft: final phase minus SFT (curriculum on), in points;
 *   - campaign.curriculum_gain_minus_ablation: that gain minus the ablation's, in points;
 *   - campaign.overhead_ratio: campaign wall time / time during which at least one activity executed
 *     (parallel shards count once), i.e. what orchestration adds around the work.
 * Usage: node --import tsx bench/campaign.ts [--seeds 3] [--phases 3] [--tasks 60] [--test-tasks 60]
 */
import { parseArgs } from 'node:util';
import { campaignWorkflowId, startCampaign } from '../campaign/control';
import { parseConfig } from '../config/load';
import { freePort } from '../infra/processes';
import { startTestStack } from '../test/harness/stack';
import { runWorkers } from '../workers/run';
import type { CampaignProgress } from '../workflows/campaignTypes';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '3' },
    phases: { type: 'string', default: '3' },
    tasks: { type: 'string', default: '60' },
    'test-tasks': { type: 'string', default: '60' },
    'demo-tasks': { type: 'string', default: '150' },
  },
});
const seeds = Number(values.seeds);
const phases = Number(values.phases);

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
const curves: Record<'on' | 'off', number[][]> = { on: [], off: [] };
let wall = 0;
let busy = 0;
try {
  for (const curriculum of [true, false]) {
    for (let seed = 1; seed <= seeds; seed++) {
      const name = `bench-${curriculum ? 'curriculum' : 'ablation'}-${seed}`;
      const config = parseConfig({
        campaign: {
          name,
          seed,
          phases,
          phase: { tasksPerPhase: Number(values.tasks), curriculum },
          environment: { testTasks: Number(values['test-tasks']), demonstrationTasks: Number(values['demo-tasks']) },
        },
        stack: { dataDir: stack.dir, temporalPort: stack.config.stack.temporalPort, minioPort: stack.config.stack.minioPort },
        s3: { bucket: stack.config.s3.bucket },
        sites: { ports: sitePorts },
      });
      const stop = new AbortController();
      const workers = runWorkers({ config, secrets: stack.secrets }, ['control', 'browser', 'train'], stop.signal);
      const started = Date.now();
      const handle = await startCampaign(client, stack.store, config);
      const result = (await client.workflow.getHandle(handle.workflowId).result()) as CampaignProgress;
      wall += Date.now() - started;
      stop.abort();
      await workers;
      const intervals: Interval[] = [];
      for await (const run of client.workflow.list({ query: `WorkflowId = '${campaignWorkflowId(name)}'` })) {
        const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
        const startedAt = new Map<string, number>();
        for (const event of history.events ?? []) {
          if (event.activityTaskStartedEventAttributes) startedAt.set(String(event.activityTaskStartedEventAttributes.scheduledEventId), millis(event.eventTime));
          const done = event.activityTaskCompletedEventAttributes;
          if (done) intervals.push({ start: startedAt.get(String(done.scheduledEventId))!, end: millis(event.eventTime) });
        }
      }
      busy += covered(intervals);
      const curve = result.history.map((h) => h.successRate);
      curves[curriculum ? 'on' : 'off'].push(curve);
      console.log(`${name}: ${curve.map((r) => `${(100 * r).toFixed(1)}%`).join(' -> ')}`);
    }
  }
} finally {
  await stack.stop();
}

const meanCurve = (runs: number[][]) => runs[0]!.map((_, phase) => runs.reduce((sum, run) => sum + run[phase]!, 0) / runs.length);
const on = meanCurve(curves.on);
const off = meanCurve(curves.off);
console.log('\nphase  curriculum  ablation');
on.forEach((rate, phase) => console.log(`${String(phase).padStart(5)}  ${(100 * rate).toFixed(1).padStart(9)}%  ${(100 * off[phase]!).toFixed(1).padStart(7)}%`));
const gainOn = 100 * (on[on.length - 1]! - on[0]!);
const gainOff = 100 * (off[off.length - 1]! - off[0]!);
on.forEach((rate, phase) => console.log(`BENCH campaign.success.curriculum.phase${phase} ${(100 * rate).toFixed(2)} %`));
off.forEach((rate, phase) => console.log(`BENCH campaign.success.ablation.phase${phase} ${(100 * rate).toFixed(2)} %`));
console.log(`BENCH campaign.gain_over_sft ${gainOn.toFixed(2)} points`);
console.log(`BENCH campaign.curriculum_gain_minus_ablation ${(gainOn - gainOff).toFixed(2)} points`);
console.log(`BENCH campaign.overhead_ratio ${(wall / busy).toFixed(3)} x`);
