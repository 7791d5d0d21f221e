/** Problems listed in a message at most; a file with thousands of bad entries ends with their count. */
const LISTED_PROBLEMS = 10;

/** The first problems, then one line that counts the rest. */
export function firstProblems(problems: readonly string[], limit = LISTED_PROBLEMS): string[] {
  if (problems.length <= limit) return [...problems];
  return [...problems.slice(0, limit), `... and ${problems.length - limit} more problem${problems.length - limit === 1 ? '' : 's'}`];
}

/** A config that cannot be used: where it came from, and every problem found (the first ten printed, then their count). */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(
      `invalid configuration (${source}):\n${firstProblems(problems)
        .map((p) => `  - ${p}`)
        .join('\n')}`,
    );
  }
}
