/**
 * `webrl tasks validate FILE`: loads a WebArena-format task file, checks every task and builds every
 * evaluator under the chosen harness; prints counts, or every problem (`task <id>: <field>: <reason>`,
 * one a line) and how many tasks are invalid, with exit code 1.
 */
import { Option, type Command } from 'commander';
import { loadConfig } from '../config/load';
import { loadModelSecrets } from '../config/secrets';
import { createJudge, LlmJudge } from '../env/evaluators/judge';
import { HARNESS_NAMES, type HarnessName } from '../env/evaluators/harnesses/names';
import { VERIFIED_TASK_SETS } from '../env/evaluators/harnesses/verified/dataset';
import { parseSiteUrlPairs, WEBARENA_DEFAULT_SITE_URLS } from '../env/siteUrls';
import { DEFAULT_MAX_TASK_FILE_BYTES, validateTaskFile } from '../env/tasks/loader';

function table(title: string, counts: Record<string, number>): string {
  const rows = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
  return [title, ...rows.map(([key, n]) => `  ${key.padEnd(16)} ${String(n).padStart(5)}`)].join('\n');
}

interface ValidateOptions {
  siteUrl?: string[];
  maxBytes: number;
  harness?: HarnessName;
  config?: string;
  requireLlmJudge?: boolean;
}

export function registerTaskCommands(program: Command): void {
  const tasks = program.commands.find((c) => c.name() === 'tasks') ?? program.command('tasks').description('WebArena-format task files');
  tasks
    .command('validate <file>')
    .description(
      `validate a task file (WebArena's or WebArena-Verified's format, or a Verified subset file; ${VERIFIED_TASK_SETS.join(' and ')} name the installed package's sets) and build its evaluators; prints counts per site and eval type, or every invalid task`,
    )
    .option('--site-url <pairs...>', 'SITE=URL for a placeholder (default: the stock WebArena addresses)')
    .option('--max-bytes <n>', 'refuse a task file larger than this', (value: string) => Number(value), DEFAULT_MAX_TASK_FILE_BYTES)
    .addOption(
      new Option(
        '--harness <name>',
        "whose evaluation semantics: WebArena-Lite's, the original WebArena benchmark's (which grades fuzzy_match with an LLM) or WebArena-Verified's (default: webarena-verified for a Verified file, else webarena-lite)",
      ).choices(HARNESS_NAMES),
    )
    .option('-c, --config <file>', 'campaign file whose models.judge is the LLM judge (default: the deterministic judge)')
    .option('--require-llm-judge', 'a task graded by an LLM (fuzzy_match, ua_match) is invalid without an LLM judge (always so with --harness webarena)')
    .action(async (file: string, options: ValidateOptions) => {
      try {
        const siteUrls = { ...WEBARENA_DEFAULT_SITE_URLS, ...parseSiteUrlPairs(options.siteUrl ?? []) };
        const judgeConfig = options.config ? (await loadConfig(options.config)).models.judge : undefined;
        const judge = createJudge(judgeConfig, loadModelSecrets());
        const report = await validateTaskFile(file, {
          siteUrls,
          judge,
          ...(options.harness ? { harness: options.harness } : {}),
          requireLlmJudge: options.requireLlmJudge ?? false,
          maxBytes: options.maxBytes,
        });
        if (report.problems.length > 0) {
          for (const problem of report.problems) console.error(problem.message);
          console.error(
            `invalid task file ${file}: ${report.invalid} of ${report.total} tasks invalid (${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}, harness ${report.harness})`,
          );
          process.exitCode = 1;
          return;
        }
        const judged = judge instanceof LlmJudge ? `LLM judge ${judge.describe()}` : 'deterministic judge';
        console.log(`${file}: ${report.total} tasks, all evaluators built (harness ${report.harness}, ${judged})`);
        console.log(table('per site (a task counts under each of its sites):', report.counts.bySite));
        console.log(table('per eval type:', report.counts.byEvalType));
      } catch (error) {
        console.error(`invalid task file ${file}: ${(error as Error).message}`);
        process.exitCode = 1;
      }
    });
}
