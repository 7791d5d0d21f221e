/**
 * The webarena backend's member of `campaign.environment`, its cross-field rules, and WebArena's own
 * variables for its sites' URLs.
 */
import { z } from 'zod';
import { environmentFields, WebArenaSchema } from '../../../config/schema';
import { evaluationHarness } from '../../evaluators/harnesses/registry';
import { SITE_NAMES } from '../../siteUrls';
import type { ConfigIssue, ConfigIssueInput } from '../contract';

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
