/**
 * Episodes on MiniWoB++'s pages: each browser worker serves the extracted pages (one small static
 * server per worker), and each episode loads its task's page in a fresh context, seeded, with the
 * episode started as the page loads. The page's own reward scores it: a positive raw reward is a
 * success; a wrong answer, an episode that ran out of the page's time, or one that never ended is a
 * failure. The page's end of episode ends the episode (nothing the agent does after it is a step). The last result of each task (raw reward, reason, expiry) is kept for the record.
 */
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import type { EpisodeEnvironment, EpisodeTask, PreparedEpisode } from '../../../browser/contract';
import { MINIWOB_VERSION } from './package';
import { episodeEnded, parseMiniwobStartUrl, prepareMiniwobContext, readResult, type MiniwobResult } from './episode';

export interface MiniwobEnvironmentOptions {
  /** The extracted `html/` folder. */
  root: string;
  /** Where a server serves it (no trailing slash). */
  baseUrl: string;
  /** Replaces each page's time limit, in milliseconds; null keeps the page's own. */
  timeLimitMs: number | null;
}

export class MiniwobEnvironment implements EpisodeEnvironment {
  /** The last result of each task, by task id. */
  readonly results = new Map<string, MiniwobResult>();

  constructor(private readonly options: MiniwobEnvironmentOptions) {}

  async prepareEpisode(context: BrowserContext, task: EpisodeTask): Promise<PreparedEpisode> {
    const ref = parseMiniwobStartUrl(task.start_url);
    await assertTaskPage(this.options.root, ref.type);
    await prepareMiniwobContext(context, ref.seed, this.options.timeLimitMs);
    return {
      startUrl: `${this.options.baseUrl}/miniwob/${ref.type}.html?seed=${ref.seed}`,
      evaluate: async (page) => {
        const result = await readResult(page, ref);
        this.results.set(String(task.task_id), result);
        // The page's own numbers go into the trace beside the score.
        return { score: result.score, details: { rawReward: result.rawReward, reward: result.reward, reason: result.reason, expired: result.expired } };
      },
      ended: episodeEnded,
      dispose: async () => {},
    };
  }
}

/** Throws a one-line error when the package has no page for `type`. */
export async function assertTaskPage(root: string, type: string): Promise<void> {
  if (!/^[a-z0-9-]+$/.test(type)) throw new Error(`not a MiniWoB++ task name: ${JSON.stringify(type)}`);
  await access(join(root, 'miniwob', `${type}.html`)).catch(() => {
    throw new Error(`miniwob ${MINIWOB_VERSION} has no task page ${type} (miniwob/html/miniwob/${type}.html)`);
  });
}
