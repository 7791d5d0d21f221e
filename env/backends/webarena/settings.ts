/**
 * The webarena backend's member of `campaign.environment` (its `webarena` section: sites, resets, task
 * files, harness), its cross-field rules, and WebArena's own variables for its sites' URLs.
 */
import { z } from 'zod';
import { httpUrl } from '../../../config/fields';
import { DEFAULT_HARNESS, HARNESS_NAMES } from '../../evaluators/harnesses/names';
import { evaluationHarness } from '../../evaluators/harnesses/registry';
import { SITE_NAMES, type SiteName } from '../../siteUrls';
import type { ConfigIssue, ConfigIssueInput } from '../contract';
import { environmentFields } from '../environmentFields';

const siteUrl = httpUrl;
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected the name of an environment variable');
const seconds = (max: number, fallback: number) => z.number().int().min(1).max(max).default(fallback);

/** A task file in WebArena's format: a local path, or a key in the campaign's store. */
const TaskSourceSchema = z.union([z.strictObject({ path: z.string().min(1) }), z.strictObject({ key: z.string().min(1) })]);

/**
 * What restores a site's seeded state: a command (run with /bin/sh), an HTTP request, or the site's
 * WebArena-Verified `env-ctrl` service (its base URL, port 8877 by default: `POST /restart?wait=1`, then `GET /status`).
 */
export const ResetHookSchema = z.union([
  z.strictObject({ command: z.string().min(1), timeoutSeconds: seconds(3600, 600) }),
  z.strictObject({
    http: z.strictObject({ url: siteUrl, method: z.enum(['POST', 'PUT', 'GET']).default('POST'), timeoutSeconds: seconds(3600, 120) }),
  }),
  z.strictObject({ kind: z.literal('env-ctrl'), url: siteUrl, timeoutSeconds: seconds(3600, 600) }),
]);

/** When a site is reset: before each evaluation, every N episodes on it, once at the start of each phase, or never. */
export const ResetPolicySchema = z.union([
  z.enum(['beforeEvaluation', 'oncePerPhase', 'never']),
  z.strictObject({ everyNEpisodes: z.number().int().min(1).max(1_000_000) }),
]);

export const WebArenaSiteSchema = z.strictObject({
  /** The site's URL (what its placeholder resolves to); else WebArena's variable (SHOPPING, REDDIT, ...). */
  url: siteUrl.optional(),
  /** The environment variables holding the account (default WEBRL_<SITE>_USERNAME / WEBRL_<SITE>_PASSWORD). */
  login: z.strictObject({ usernameEnv: envName.optional(), passwordEnv: envName.optional() }).default({}),
  reset: z.strictObject({ hook: ResetHookSchema, policy: ResetPolicySchema }).optional(),
  /** Episodes on this site at once, per browser worker (a real site is shared state); default maxConcurrentEpisodesPerSite. */
  maxConcurrentEpisodes: z.number().int().min(1).max(256).optional(),
});
export type WebArenaSiteSettings = z.infer<typeof WebArenaSiteSchema>;

/** WebArena's (or WebArena-Lite's) sites, or the embedded ones served by `webrl env serve`. */
export const WebArenaSchema = z.strictObject({
  sites: z
    .strictObject(
      Object.fromEntries(SITE_NAMES.map((site) => [site, WebArenaSiteSchema.optional()])) as Record<SiteName, z.ZodOptional<typeof WebArenaSiteSchema>>,
    )
    .default({}),
  /** WebArena's HOMEPAGE (health-checked when given; no task starts there). */
  homepage: siteUrl.optional(),
  tasks: z.strictObject({ train: TaskSourceSchema, test: TaskSourceSchema }),
  /**
   * Whose scoring rules the task files follow (docs/webarena.md): `webarena-lite` (WebArena-Lite's and
   * the exported embedded tasks') or `webarena` (the original benchmark's; its fuzzy_match and ua_match
   * ask `models.judge`, which must then be a chat endpoint), or `webarena-verified` (WebArena-Verified's
   * task files, scored by its official evaluator from the agent's JSON response and the network trace).
   */
  harness: z.enum(HARNESS_NAMES).default(DEFAULT_HARNESS),
  maxConcurrentEpisodesPerSite: z.number().int().min(1).max(256).default(4),
  /** A signed-in state is checked again (one HTTP request) by the first episode after this many seconds; 0 = every episode. */
  sessionCheckSeconds: z.number().min(0).max(86_400).default(60),
  /** Before each phase and when a shard's episodes fail: every site must answer, within this many tries. */
  healthCheck: z
    .strictObject({
      attempts: z.number().int().min(1).max(100).default(3),
      intervalSeconds: z.number().min(0).max(600).default(5),
      timeoutSeconds: seconds(600, 15),
    })
    .default({ attempts: 3, intervalSeconds: 5, timeoutSeconds: 15 }),
});
export type WebArenaConfig = z.infer<typeof WebArenaSchema>;

const MISSING_SECTION = 'backend webarena needs the webarena section (sites, tasks)';

export const webarenaSettings = z.strictObject({
  /** `webarena`: sites running elsewhere (WebArena's, or the embedded ones `webrl env serve` deploys). */
  backend: z.literal('webarena'),
  webarena: WebArenaSchema.optional()
    .refine((section) => section !== undefined, { message: MISSING_SECTION })
    .transform((section) => section!),
  ...environmentFields,
});
export type WebArenaSettings = z.output<typeof webarenaSettings>;

/** WebArena's own variables for its sites' URLs (read only for a webarena campaign): variable -> config path. */
export const WEBARENA_URL_OVERRIDES: Record<string, string[]> = {
  ...Object.fromEntries(SITE_NAMES.map((site) => [site.toUpperCase(), ['campaign', 'environment', 'webarena', 'sites', site, 'url']])),
  HOMEPAGE: ['campaign', 'environment', 'webarena', 'homepage'],
};

export function webarenaConfigIssues(config: ConfigIssueInput, settings: WebArenaSettings): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  // The section is absent when it was left out (that is reported on its own); the other rules still apply.
  const section = settings.webarena as WebArenaSettings['webarena'] | undefined;
  const needsChatJudge = section && evaluationHarness(section.harness).needsChatJudge;
  if (needsChatJudge && config.models.judge?.backend !== 'chat') issues.push({ path: ['models', 'judge'], message: needsChatJudge });
  // The curriculum's new tasks come from the chat generator: embedded evolution writes tasks for the embedded world only.
  if (config.campaign.phase.curriculum && config.models.taskGenerator.backend !== 'chat') {
    issues.push({
      path: ['campaign', 'phase', 'curriculum'],
      message: 'the curriculum on WebArena sites needs models.taskGenerator.backend: chat (or curriculum: false for tasks from the train file)',
    });
  }
  return issues;
}
