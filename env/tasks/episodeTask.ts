/** A stored task as the episode loop sees it: its start URL resolved, its oracle plan kept. */
import type { EpisodeTask, OracleStep } from '../../browser/contract';
import { resolvePlaceholders, type SiteUrls } from '../siteUrls';
import type { EnvironmentTask } from '../backends/contract';
import type { WebArenaTask } from './schema';
import { verifiedIntent } from './verified';

/** The first start URL of a task, placeholders resolved (WebArena joins several with ` |AND| `). */
export function startUrlOf(task: Pick<EnvironmentTask, 'start_url'>, siteUrls: SiteUrls): string {
  return resolvePlaceholders(task.start_url.split(' |AND| ')[0]?.trim() ?? '', siteUrls);
}

/** What the episode loop needs of a task (with its oracle plan, for the oracle policy). */
export function toEpisodeTask(task: EnvironmentTask, siteUrls: SiteUrls): EpisodeTask & { oracle?: OracleStep[] } {
  // A WebArena-Verified task tells the actor the JSON answer its evaluator reads.
  const intent = task.verified ? verifiedIntent(task as WebArenaTask) : task.intent;
  return { task_id: task.task_id, intent, start_url: startUrlOf(task, siteUrls), ...(task.oracle ? { oracle: task.oracle } : {}) };
}
