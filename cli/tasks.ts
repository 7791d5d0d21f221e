/** `webrl tasks validate FILE`: loads a WebArena-format task file, builds every evaluator, prints counts. */
import type { Command } from 'commander';
import { DeterministicJudge } from '../env/evaluators/judge';
import { parseSiteUrlPairs, WEBARENA_DEFAULT_SITE_URLS } from '../env/site-urls';
import { DEFAULT_MAX_TASK_FILE_BYTES, loadTaskFile } from '../env/tasks/loader';

function table(title: string, counts: Record<string, number>): string {
  const rows = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
  return [title, ...rows.map(([key, n]) => `  ${key.padEnd(16)} ${String(n).padStart(5)}`)].join('\n');
}

export function registerTaskCommands(program: Command): void {
  const tasks = program.commands.find((c) => c.name() === 'tasks') ?? program.command('tasks').description('WebArena-format task files');
  tasks
    .command('validate <file>')
    .description('validate a task file and build its evaluators; prints counts per site and eval type')
    .option('--site-url <pairs...>', 'SITE=URL for a placeholder (default: the stock WebArena addresses)')
    .option('--max-bytes <n>', 'refuse a task file larger than this', (value: string) => Number(value), DEFAULT_MAX_TASK_FILE_BYTES)
    .action(async (file: string, options: { siteUrl?: string[]; maxBytes: number }) => {
      const siteUrls = { ...WEBARENA_DEFAULT_SITE_URLS, ...parseSiteUrlPairs(options.siteUrl ?? []) };
      try {
        const { counts } = await loadTaskFile(file, { siteUrls, judge: new DeterministicJudge(), maxBytes: options.maxBytes });
        console.log(`${file}: ${counts.total} tasks, all evaluators built`);
        console.log(table('per site (a task counts under each of its sites):', counts.bySite));
        console.log(table('per eval type:', counts.byEvalType));
      } catch (error) {
        console.error(`invalid task file ${file}: ${(error as Error).message}`);
        process.exitCode = 1;
      }
    });
}
