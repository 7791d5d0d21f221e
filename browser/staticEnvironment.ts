/**
 * The environment for plain rollout tasks on static or fixture pages: the context needs no preparation
 * (the pool gives each episode a fresh one), the start URL is the task's (resolved against `baseUrl`
 * when relative), and the score checks the task's optional `expected_answer` (contained in the exit
 * message, case-insensitive) and `expected_url` (contained in the final URL). A task with neither scores 0.
 */
import type { EpisodeEnvironment, EpisodeTask } from './contract';
import type { RolloutTask } from './tasks';

export interface StaticEnvironmentOptions {
  /** Base for relative start URLs, e.g. the URL of a served fixture directory. */
  baseUrl?: string;
}

/** Lower-cased, with one pair of surrounding quotes dropped (WebArena's answer normalisation). */
function normalise(text: string): string {
  const trimmed = text.trim();
  const unquoted = /^(["']).*\1$/s.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
  return unquoted.toLowerCase();
}

export function createStaticEnvironment(options: StaticEnvironmentOptions = {}): EpisodeEnvironment {
  return {
    async prepareEpisode(_context, task: EpisodeTask & Partial<RolloutTask>) {
      const startUrl = options.baseUrl ? new URL(task.start_url, `${options.baseUrl}/`).href : task.start_url;
      return {
        startUrl,
        async evaluate(page, answer) {
          const checks: boolean[] = [];
          if (task.expected_answer !== undefined) {
            checks.push(answer !== null && normalise(answer).includes(normalise(task.expected_answer)));
          }
          if (task.expected_url !== undefined) checks.push(page.url().includes(task.expected_url));
          return checks.length > 0 && checks.every(Boolean) ? 1 : 0;
        },
        async dispose() {},
      };
    },
  };
}
