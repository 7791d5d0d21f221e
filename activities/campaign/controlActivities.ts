/**
 * Activities of the control task queue: cheap bookkeeping next to the workflow. Task sets for each
 * phase (the self-evolving curriculum, or the train split for the ablation), the held-out test set,
 * the evaluation summary, and the phase manifest, written last.
 */
import { Rng } from '../../env/random';
import { evolveTasks } from '../../env/tasks/evolve';
import type { WebArenaTask } from '../../env/tasks/schema';
import { phaseManifestKey, type PhaseManifestData } from '../../campaign/manifest';
import { manifestKey } from '../../storage/keys';
import type { PhaseSummary } from '../../workflows/campaignTypes';
import type { CampaignActivities } from './contract';
import { datasetObject, type CampaignContext } from './context';
import type { TrajectoryIndexRow } from './episodes';

type ControlActivities = Pick<CampaignActivities, 'generateTasks' | 'evaluationTasks' | 'summarizeEvaluation' | 'publishPhase'>;

/** Ids of generated tasks: clear of the splits' ids (test from 0, train from 10,000). */
const GENERATED_ID_BASE = 1_000_000;
const GENERATED_IDS_PER_PHASE = 100_000;

export interface EvaluationResult {
  successRate: number;
  perSite: Record<string, number>;
  tasks: Array<{ taskId: string; site: string; score: number; steps: number; answer: string | null }>;
}

export function createControlActivities(deps: { ctx: CampaignContext }): ControlActivities {
  const { ctx } = deps;

  return {
    async generateTasks(input) {
      const key = ctx.key(input, 'tasks', 'candidates');
      return ctx.once(key, async () => {
        const config = await ctx.config(input.configKey);
        const { worldSeed } = config.campaign.environment;
        const train = ctx.split(worldSeed, 'train');
        let tasks: WebArenaTask[];
        if (!input.curriculum || !input.failedTasks) {
          tasks = new Rng(input.seed).fork(`train-sample-${input.phase}`).sample(train, input.count);
        } else {
          // Everything asked before must not be asked again: both splits and every earlier phase's tasks.
          const known = new Set([...train, ...ctx.split(worldSeed, 'test')].map((t) => t.intent));
          for (let phase = 1; phase < input.phase; phase++) {
            const earlier = await ctx.store.readManifest<{ key: string }>(manifestKey(ctx.key({ ...input, phase }, 'tasks', 'candidates')));
            if (!earlier) continue;
            for await (const task of ctx.store.readJsonl<WebArenaTask>(earlier.data.key)) known.add(task.intent);
          }
          tasks = evolveTasks({
            failed: await ctx.readDataset<WebArenaTask>(input.failedTasks),
            knownIntents: known,
            count: input.count,
            seed: input.seed + input.phase,
            worldSeed,
            firstTaskId: GENERATED_ID_BASE + input.phase * GENERATED_IDS_PER_PHASE,
          });
        }
        const ref = await ctx.writeDataset(ctx.key(input, 'tasks', 'candidates.jsonl'), tasks);
        return { objects: [datasetObject(ref, (await ctx.store.head(ref.key)).bytes)], data: ref };
      });
    },

    async evaluationTasks(scope) {
      return ctx.once(ctx.key(scope, 'tasks', 'test'), async () => {
        const config = await ctx.config(scope.configKey);
        const { worldSeed, testTasks } = config.campaign.environment;
        const test = ctx.split(worldSeed, 'test');
        // The same sample every phase, so phases are compared on the same tasks.
        const tasks = testTasks > 0 && testTasks < test.length ? new Rng(scope.seed).fork('test-sample').sample(test, testTasks) : test;
        const ref = await ctx.writeDataset(ctx.key(scope, 'tasks', 'test.jsonl'), tasks);
        return { objects: [datasetObject(ref, (await ctx.store.head(ref.key)).bytes)], data: ref };
      });
    },

    async summarizeEvaluation(input) {
      return ctx.once(ctx.key(input, 'eval'), async () => {
        const rows = (await Promise.all(input.shards.map((shard) => ctx.readDataset<TrajectoryIndexRow>(shard)))).flat();
        const bySite = new Map<string, number[]>();
        for (const row of rows) bySite.set(row.site, [...(bySite.get(row.site) ?? []), row.score]);
        const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
        const result: EvaluationResult = {
          successRate: mean(rows.map((r) => r.score)),
          perSite: Object.fromEntries([...bySite.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([site, scores]) => [site, mean(scores)])),
          tasks: rows.map((r) => ({ taskId: r.taskId, site: r.site, score: r.score, steps: r.steps, answer: r.answer })),
        };
        const evaluation = ctx.key(input, 'eval.json');
        const object = await ctx.store.putJson(evaluation, result);
        return { objects: [object], data: { evaluation, successRate: result.successRate, perSite: result.perSite } };
      });
    },

    async publishPhase(input) {
      const key = phaseManifestKey(input.campaignId, input.phase);
      const summary: PhaseSummary = { phase: input.phase, manifestKey: key, ...input.numbers };
      const datasets = [input.tasks, input.rewards, input.experience, input.carry.failedTasks, input.carry.replayBuffer];
      const objects = await Promise.all(datasets.map(async (ref) => datasetObject(ref, (await ctx.store.head(ref.key)).bytes)));
      for (const model of Object.values(input.carry.models)) {
        const published = await ctx.store.readManifest(manifestKey(model));
        if (published) objects.push(...published.objects);
      }
      const data: PhaseManifestData = {
        campaignId: input.campaignId,
        phase: input.phase,
        summary,
        carry: input.carry,
        artifacts: { tasks: input.tasks, rewards: input.rewards, experience: input.experience, evaluation: input.evaluation },
      };
      const manifest = await ctx.store.publishManifest(key, objects, data);
      return { manifestKey: key, summary: manifest.data.summary };
    },
  };
}
