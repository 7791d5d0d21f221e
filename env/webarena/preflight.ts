/**
 * The task files of a `webarena` campaign, and the check that runs before it starts (the webarena
 * backend's `check`: `webrl config check`, `campaign start`, `campaign run`): every task's site has a
 * URL, every site answers, every site a task needs accepts its account, and phase 0 has oracle plans
 * to demonstrate. All problems come back together, each naming its site and the tasks it affects.
 */
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../../infra/tools';
import { withOraclePlans, type PreflightOptions } from '../backends/contract';
import type { WebArenaConfig } from '../backends/webarena/settings';
import type { ArtifactStore } from '../../storage/artifactStore';
import { parseTasks, readTaskFile } from '../tasks/loader';
import type { WebArenaTask } from '../tasks/schema';
import type { EvaluationHarness } from '../evaluators/harnesses/contract';
import { evaluationHarness, registeredHarnesses } from '../evaluators/harnesses/registry';
import { accountOf, signIn } from './sessions';
import { resetHookProblems, siteUrlsOf, unavailableSites, webArenaSites } from './sites';

export type TaskSource = WebArenaConfig['tasks']['train'];

export function describeSource(source: TaskSource): string {
  return 'path' in source ? source.path : `storage key ${source.key}`;
}

/** Reads a task file from disk or from the campaign's store and validates it. */
export async function loadTaskSource(source: TaskSource, store?: ArtifactStore): Promise<WebArenaTask[]> {
  if ('path' in source) return readTaskFile(source.path);
  if (!store) throw new Error(`the task file at storage key ${source.key} needs the campaign's store`);
  const text = (await store.getBytes(source.key)).toString('utf8');
  try {
    return parseTasks(JSON.parse(text));
  } catch (error) {
    throw new Error(`${source.key}: ${(error as Error).message}`);
  }
}

function taskList(tasks: readonly WebArenaTask[]): string {
  const ids = tasks.map((task) => String(task.task_id));
  return `task${ids.length === 1 ? '' : 's'} ${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ` and ${ids.length - 20} more` : ''}`;
}

/**
 * Why `harness` refuses tasks it does not score: the harness that alone scores them all is named as
 * the fix; tasks that several would score are just not in this one's format.
 */
function formatMismatch(harness: EvaluationHarness, tasks: readonly WebArenaTask[]): string {
  const fitting = registeredHarnesses().filter((other) => tasks.every((task) => other.scores(task)));
  if (fitting.length === 1) return `are ${fitting[0]!.taskKind} tasks: set harness: ${fitting[0]!.name}`;
  return `are not in ${harness.taskKind}'s format, which harness ${harness.name} scores`;
}

/** Every problem that would stop a `webarena` campaign (its task files, its sites' URLs, health and accounts); empty when it may start. */
export async function sitesAndTasksProblems(webarena: WebArenaConfig, options: PreflightOptions): Promise<string[]> {
  const env = options.env ?? process.env;
  const problems: string[] = [];
  const tasks: WebArenaTask[] = [];
  const harness = evaluationHarness(webarena.harness);
  for (const split of ['train', 'test'] as const) {
    try {
      const loaded = await loadTaskSource(webarena.tasks[split], options.store);
      if (loaded.length === 0) problems.push(`campaign.environment.webarena.tasks.${split}: ${describeSource(webarena.tasks[split])} holds no tasks`);
      // A harness scores the tasks of its own format only (WebArena-Verified's evaluator, none other).
      const mismatched = loaded.filter((task) => !harness.scores(task));
      if (mismatched.length) {
        const why = formatMismatch(harness, mismatched);
        problems.push(`campaign.environment.webarena.tasks.${split}: ${taskList(mismatched)} of ${describeSource(webarena.tasks[split])} ${why}`);
      }
      tasks.push(...loaded);
      if (split === 'train' && options.demonstrationsNeedOraclePlans && loaded.length > 0 && withOraclePlans(loaded).length === 0) {
        problems.push(
          `campaign.environment.webarena.tasks.train: phase 0 trains the embedded actor on oracle demonstrations, and no task of ${describeSource(webarena.tasks.train)} has an oracle plan (use tasks from webrl env export, or a completions actor)`,
        );
      }
    } catch (error) {
      problems.push(`campaign.environment.webarena.tasks.${split}: ${(error as Error).message}`);
    }
  }
  const unavailable = await harness.unavailable?.();
  if (unavailable) problems.push(`campaign.environment.webarena.harness: ${unavailable}`);
  const sites = webArenaSites(webarena);
  const urls = siteUrlsOf(sites);
  const bySite = new Map<string, WebArenaTask[]>();
  for (const task of tasks) for (const site of task.sites) bySite.set(site, [...(bySite.get(site) ?? []), task]);
  // The task schema admits WebArena's sites only, so each has a setting for its URL.
  for (const [site, affected] of bySite) {
    if (!urls[site as keyof typeof urls]) {
      problems.push(
        `site ${site} has no URL (set campaign.environment.webarena.sites.${site}.url or ${site.toUpperCase()}); it is needed by ${taskList(affected)}`,
      );
    }
  }
  problems.push(...(await resetHookProblems(sites)));
  const down = await unavailableSites([...sites, ...(webarena.homepage ? [{ name: 'homepage', url: webarena.homepage }] : [])], webarena.healthCheck);
  for (const site of down) problems.push(`${site.message}${bySite.has(site.site) ? `; it is needed by ${taskList(bySite.get(site.site)!)}` : ''}`);
  const needLogin = sites.filter((site) => site.form && bySite.has(site.name) && !down.some((d) => d.site === site.name));
  if (needLogin.length && !options.skipLogin) {
    const browser = await chromium.launch({ executablePath: (await ensureChromium()).path, args: CHROMIUM_ARGS });
    try {
      await Promise.all(
        needLogin.map(async (site) => {
          const context = await browser.newContext();
          try {
            await signIn(context, site, accountOf(site, env));
          } catch (error) {
            problems.push(`${(error as Error).message}; it is needed by ${taskList(bySite.get(site.name)!)}`);
          } finally {
            await context.close().catch(() => undefined);
          }
        }),
      );
    } finally {
      await browser.close();
    }
  }
  return problems;
}
