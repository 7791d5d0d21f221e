/**
 * The names `harness` may take in a webarena campaign's settings (and `webrl tasks --harness`), one per
 * folder here. A leaf module, so the config schema can list them without importing what they score with.
 */
export const HARNESS_NAMES = ['webarena-lite', 'webarena', 'webarena-verified'] as const;
export type HarnessName = (typeof HARNESS_NAMES)[number];

/** The harness of a task set that names none (the embedded sites', MiniWoB++'s, WebArena-Lite's files). */
export const DEFAULT_HARNESS: HarnessName = 'webarena-lite';
