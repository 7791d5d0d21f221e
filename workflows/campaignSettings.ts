/**
 * Phase settings as the workflow sees them: validating an operator's change (the same schema the
 * campaign file is checked with) and rendering the per-phase table shown in the UI.
 */
import { PhaseSettingsSchema } from '../config/schema';
import type { CampaignProgress, PhaseSettings } from './campaignTypes';

/** Throws (rejecting the update, nothing recorded in history) when the merged settings are invalid. */
export function checkSettingsUpdate(current: PhaseSettings, update: Partial<PhaseSettings>): void {
  const unknown = Object.keys(update).filter((key) => !(key in PhaseSettingsSchema.shape));
  if (unknown.length) throw new Error(`unknown phase setting(s): ${unknown.join(', ')}`);
  const result = PhaseSettingsSchema.safeParse({ ...current, ...update });
  if (!result.success) {
    throw new Error(result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
  }
}

const percent = (x: number) => `${(100 * x).toFixed(1)}%`;

/** Markdown for the UI's "current details": where the campaign is, and every phase so far. */
export function renderPhaseTable(progress: CampaignProgress): string {
  const lines = [
    `**${progress.campaignId}** · ${progress.status} · phase ${progress.phase} of ${progress.phases}` +
      (progress.activity ? ` · running ${progress.activity}` : ''),
  ];
  if (progress.failure) {
    lines.push('', `**Failed:** ${progress.failure.activity} in phase ${progress.failure.phase}: ${progress.failure.message}`);
    lines.push('Retry with `webrl campaign retry-phase` or the `retryPhase` update.');
  }
  lines.push('', '| phase | test success | tasks kept | trajectories | rollout successes | replayed steps |', '|---|---|---|---|---|---|');
  for (const summary of progress.history) {
    lines.push(
      `| ${summary.phase} | ${percent(summary.successRate)} | ${summary.tasksKept} | ${summary.trajectories} | ${summary.rolloutSuccesses} | ${summary.replayedSteps} |`,
    );
  }
  // The trajectories behind these numbers: the HTML report, written where the operator asks for it.
  lines.push(
    '',
    `Every trajectory step by step (observations, actions, ORM verdicts, screenshots): \`webrl campaign report -n ${progress.campaignId} --html DIR\`, ` +
      'then open DIR/index.html (the main job writes campaign-report/index.html when it ends).',
  );
  return lines.join('\n');
}
