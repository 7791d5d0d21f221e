/**
 * Activities of the browser task queue: SFT demonstrations, rollout shards (training, probe and
 * evaluation), and the critic filter (which needs each task's start page). Each derives its output
 * keys from its scope and returns the published manifest when one exists.
 */
import { heartbeat } from '../heartbeats';
import { formatAction, parseAction } from '../../browser/grammar';
import { createOraclePolicy } from '../../browser/policies/oracle';
import type { OracleStep } from '../../browser/contract';
import { startUrlOf, toEpisodeTask } from '../../env/tasks/episodeTask';
import type { EpisodeEnvironment, Observation } from '../../browser/contract';
import type { Policy, PolicyTask } from '../../browser/policies/policy';
import { Rng } from '../../env/random';
import type { EnvironmentTask } from '../../env/backends/contract';
import { backendOf } from '../../env/backends/registry';
import type { CriticValues } from '../../models/critic';
import { deriveSeed } from '../../browser/rng';
import type { BrowserActivities, ShardResult } from './contract';
import type { BrowserRuntime } from './browserRuntime';
import type { CampaignContext } from './context';
import { episodeOptions, InfrastructureFailure, runTasks, type TrajectoryIndexRow, type TrajectoryRecord } from './episodes';
import type { Config } from '../../config/campaignConfig';
import { demonstrationTasks } from './demonstrationTasks';
import { criticExamplesOf, ormExamplesOf } from './models';
import type { RolesFor } from './backends';
import { mostPromisingTasks, taskTemplate } from './mostPromisingTasks';
import { campaignEnvironment, prepareEnvironment } from './environments';

/**
 * A plausible failure for the ORM and critic to learn from: the oracle plan cut halfway, ending with
 * another task's final message. The environment's evaluator labels it; nothing assumes it fails.
 */
function truncatedPlan(task: EnvironmentTask, other: EnvironmentTask | undefined): OracleStep[] {
  const plan = task.oracle ?? [];
  const moves = plan.filter((step) => step.action !== 'exit');
  const otherExit = other?.oracle?.find((step) => step.action === 'exit');
  const message = otherExit && otherExit.action === 'exit' ? otherExit.message : 'N/A';
  return [...moves.slice(0, Math.floor(moves.length / 2)), { action: 'exit', message }];
}

/** The start page as the actor would first see it: an episode whose policy looks once and exits. */
async function observeStartPage(runtime: BrowserRuntime, environment: EpisodeEnvironment, task: PolicyTask, config: Config): Promise<Observation> {
  let seen: Observation | undefined;
  const observer: Policy = {
    name: 'start-page-observer',
    async act({ observation }) {
      seen = observation;
      return { response: 'exit(message="")', prompt: '' };
    },
  };
  const { outcome } = await runtime.pool.runEpisode({ task, policy: observer, environment, options: { ...episodeOptions(config), maxSteps: 1 } });
  if (!seen) throw new InfrastructureFailure(`could not observe the start page of task ${task.task_id}: ${outcome.reason} ${outcome.detail ?? ''}`);
  return seen;
}

function canonical(response: string): string {
  const parsed = parseAction(response);
  return parsed.ok ? formatAction(parsed.action) : response;
}

export function createBrowserActivities(deps: { ctx: CampaignContext; runtime: BrowserRuntime; roles: RolesFor }): BrowserActivities {
  const { ctx, runtime, roles } = deps;

  return {
    async prepareEnvironment(input) {
      const config = await ctx.config(input);
      const resetsOnce = (resets: () => Promise<string[]>) =>
        ctx.once(ctx.key(input, 'environment', `resets-${input.moment}`), async () => ({ objects: [], data: await resets() }));
      return prepareEnvironment(runtime, config, input.moment, resetsOnce);
    },

    async collectDemonstrations(scope) {
      return ctx.once(ctx.key(scope, 'demonstrations', 'datasets'), async () => {
        const config = await ctx.config(scope);
        // Demonstrations need the backend's oracle: the tasks that carry a plan (on WebArena's task files, few or none).
        const demonstrable = backendOf(config).backend.oracle?.demonstrable;
        const train = demonstrable ? demonstrable(await ctx.tasks(config, 'train')) : [];
        const tasks = demonstrationTasks(train, config.campaign.environment.demonstrationTasks, scope.seed);
        const oracle = await runTasks({
          ctx,
          runtime,
          config,
          tasks,
          prefix: ctx.key(scope, 'demonstrations', 'oracle') + '/',
          stage: 'oracle',
          policyFor: () => createOraclePolicy(),
        });
        const rng = new Rng(scope.seed).fork('negatives');
        const perturbed = tasks.map((task) => {
          const sameTemplate = tasks.filter((t) => t.intent_template_id === task.intent_template_id && t.task_id !== task.task_id);
          return { ...task, oracle: truncatedPlan(task, sameTemplate.length ? rng.pick(sameTemplate) : undefined) };
        });
        const negatives = await runTasks({
          ctx,
          runtime,
          config,
          tasks: perturbed,
          prefix: ctx.key(scope, 'demonstrations', 'perturbed') + '/',
          stage: 'perturbed',
          policyFor: () => createOraclePolicy(),
        });
        const records = async (rows: TrajectoryIndexRow[]) => Promise.all(rows.map((row) => ctx.store.getJson<TrajectoryRecord>(row.trajectoryKey)));
        const all = [...(await records(oracle)), ...(await records(negatives))];
        const demonstrations = all
          .filter((record) => record.score === 1 && oracle.some((row) => row.trajectoryKey.endsWith(`/oracle/trajectories/${record.taskId}.json`)))
          .flatMap((record) => record.rounds.map((round) => ({ state: round.state, response: canonical(round.response) })));
        const refs = {
          demonstrations: await ctx.writeDataset(ctx.key(scope, 'demonstrations', 'actor-sft.jsonl'), demonstrations),
          criticExamples: await ctx.writeDataset(ctx.key(scope, 'demonstrations', 'critic.jsonl'), criticExamplesOf(all)),
          ormExamples: await ctx.writeDataset(ctx.key(scope, 'demonstrations', 'orm.jsonl'), ormExamplesOf(all)),
        };
        return { objects: await ctx.datasetObjects(...Object.values(refs)), data: refs };
      });
    },

    async runRolloutShard(input): Promise<ShardResult> {
      const base = ctx.key(input, 'rollouts', input.purpose, `shard-${String(input.shard).padStart(4, '0')}`);
      return ctx.once(base, async () => {
        const config = await ctx.config(input);
        const tasks = (await ctx.readDataset<EnvironmentTask>(input.tasks)).slice(input.offset, input.offset + input.limit);
        const seed = deriveSeed(input.seed, input.phase, input.purpose);
        const policyFor = await roles(config).actor.policies(input.actor, { temperature: input.temperature, seed });
        const rows = await runTasks({
          ctx,
          runtime,
          config,
          tasks,
          prefix: `${base}/`,
          stage: `${input.purpose} shard ${input.shard}`,
          policyFor,
        });
        const trajectories = await ctx.writeDataset(`${base}/index.jsonl`, rows);
        const result: ShardResult = { shard: input.shard, trajectories, infrastructureFailures: 0 };
        return { objects: await ctx.datasetObjects(trajectories), data: result };
      });
    },

    async filterTasksByCritic(input) {
      return ctx.once(ctx.key(input, 'tasks', 'kept'), async () => {
        const config = await ctx.config(input);
        const candidates = await ctx.readDataset<EnvironmentTask>(input.candidates);
        const { critic, feasibility } = roles(config);
        if (!critic.valuesTasks) {
          const tasks = await ctx.writeDataset(ctx.key(input, 'tasks', 'kept.jsonl'), candidates.slice(0, input.limit ?? candidates.length));
          return { objects: await ctx.datasetObjects(tasks), data: { tasks, meanValue: 0 } };
        }
        const { environment, siteUrls } = await campaignEnvironment(runtime, config, candidates);
        // Tasks share start pages: observe each distinct start URL once, in a fresh episode state.
        const observations = new Map<string, Observation>();
        for (const task of candidates) {
          const url = startUrlOf(task, siteUrls);
          if (observations.has(url)) continue;
          observations.set(url, await observeStartPage(runtime, environment, toEpisodeTask(task, siteUrls), config));
          heartbeat({ startPages: observations.size });
        }
        const items = candidates.map((task) => ({
          id: String(task.task_id),
          state: { intent: task.intent, history: [], observation: observations.get(startUrlOf(task, siteUrls))! },
        }));
        const { values, failures: criticFailures } = await critic.values(input.critic, items);
        const [low, high] = input.band;
        // Either head may qualify the task (WebRL's double critic).
        let kept = candidates.filter((_, i) => {
          const v = values[i];
          return v !== null && v !== undefined && [v.v1, v.v2].some((x) => x >= low && x <= high);
        });
        const judged = values.filter((v): v is CriticValues => v !== null);
        const meanValue = judged.length ? judged.reduce((sum, v) => sum + v.value, 0) / judged.length : 0;
        await ctx.store.putJson(
          ctx.key(input, 'tasks', 'critic-values.json'),
          candidates.map((t, i) => ({ taskId: t.task_id, ...(values[i] ?? { failed: true }) })),
        );
        if (criticFailures.length) await ctx.store.putJson(ctx.key(input, 'tasks', 'critic-failures.json'), criticFailures);

        if (feasibility && kept.length > 0) {
          heartbeat({ feasibility: kept.length });
          const judgedTasks = await feasibility.judge(kept);
          kept = judgedTasks.kept;
          await ctx.store.putJson(ctx.key(input, 'tasks', 'feasibility.json'), {
            model: feasibility.model,
            judged: judgedTasks.verdicts.length,
            kept: judgedTasks.kept.map((task) => task.task_id),
            dropped: judgedTasks.dropped.map((task) => task.task_id),
            unjudged: judgedTasks.unjudged.map((task) => task.task_id),
            verdicts: judgedTasks.verdicts,
            failures: judgedTasks.failures,
          });
        }
        if (input.limit !== undefined) {
          const headValue = new Map(candidates.map((task, i) => [task, Math.max(values[i]?.v1 ?? 0, values[i]?.v2 ?? 0)]));
          kept = mostPromisingTasks(kept, {
            limit: input.limit,
            value: (task) => headValue.get(task)!,
            template: taskTemplate,
          });
        }
        const tasks = await ctx.writeDataset(ctx.key(input, 'tasks', 'kept.jsonl'), kept);
        return { objects: await ctx.datasetObjects(tasks), data: { tasks, meanValue } };
      });
    },
  };
}
