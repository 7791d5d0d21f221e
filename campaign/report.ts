/**
 * The campaign report, from the phase manifests alone: a per-phase table for the terminal, the
 * evidence of whether each phase helped, and a success-rate chart (SVG) with one line overall (with
 * its 95% intervals) and one per site.
 */
import type { RewardRow } from '../activities/campaign/trainActivities';
import { verdict } from '../models/orm';
import type { ArtifactStore } from '../storage/artifactStore';
import type { PhaseSummary } from '../workflows/campaignTypes';
import { EVIDENCE_COLUMNS, evidenceCells, type PhaseEvidence } from './evidence';
import type { PhaseManifestData } from '../activities/campaign/phaseManifest';

const percent = (x: number) => `${(100 * x).toFixed(1)}%`;

/**
 * How often the ORM's verdict (P(YES) >= 0.5) matched the evaluator on a phase's rollouts, over the
 * trajectories whose task has an evaluator and that the ORM judged; null when none has. Rows written before rewards recorded
 * `graded` count as graded.
 */
export async function ormAgreement(store: ArtifactStore, phase: PhaseManifestData): Promise<number | null> {
  let graded = 0;
  let agreed = 0;
  for await (const row of store.readJsonl<RewardRow>(phase.artifacts.rewards.key)) {
    // Not graded, or not judged (the evaluator's score was the reward): nothing to compare.
    if (row.graded === false || row.pYes === null) continue;
    graded++;
    if (verdict(row.pYes).reward === row.score) agreed++;
  }
  return graded === 0 ? null : agreed / graded;
}

const number = (x: number) => (Math.abs(x) >= 0.001 || x === 0 ? x.toFixed(3) : x.toExponential(1));

/**
 * What training each phase's actor did (the manifests' `training`), one line per phase: optimizer steps
 * taken and batches skipped (no loss row), positive rows by source, KL per token; n/a where the trainer did not tell.
 */
export function renderActorTrainingText(phases: PhaseManifestData[]): string {
  const lines = phases.map((phase) => {
    const name = phase.phase === 0 ? 'phase 0 (SFT)' : `phase ${phase.phase}`;
    const metrics = phase.training?.actor;
    if (!metrics) return `${name}: n/a (the actor was not trained, or its trainer did not tell)`;
    const skipped = metrics.skippedSteps === null ? 'skipped n/a' : `${metrics.skippedSteps} skipped (no loss row)`;
    const rows = metrics.positiveRows;
    const positive = rows
      ? `positive rows ${rows.success} / ${rows.rollout} / ${rows.replay} / ${rows.demonstration} of ${metrics.rows}`
      : `${metrics.rows} rows, positive rows by source n/a`;
    const kl = metrics.klPerToken ? `KL/token mean ${number(metrics.klPerToken.mean)}, max |${number(metrics.klPerToken.maxAbs)}|` : 'KL/token n/a';
    return `${name}: ${metrics.objective}, ${metrics.optimizerSteps} optimizer steps, ${skipped}; ${positive}; ${kl}`;
  });
  return ["actor training (positive rows: this phase's successes / other rollouts / replay / demonstrations)", ...lines].join('\n');
}

/** The per-phase table; `agreement` (ormAgreement of each summary's phase) adds the ORM-vs-evaluator column. */
export function renderPhaseTableText(summaries: PhaseSummary[], agreement?: (number | null)[]): string {
  const sites = [...new Set(summaries.flatMap((s) => Object.keys(s.perSite)))].sort();
  const header = ['phase', 'test success', ...sites, 'tasks kept', 'trajectories', 'rollout succ.', 'replayed', ...(agreement ? ['ORM = evaluator'] : [])];
  const rows = summaries.map((s, i) => [
    s.phase === 0 ? '0 (SFT)' : String(s.phase),
    percent(s.successRate),
    ...sites.map((site) => (site in s.perSite ? percent(s.perSite[site]!) : '-')),
    String(s.tasksKept),
    String(s.trajectories),
    String(s.rolloutSuccesses),
    String(s.replayedSteps),
    ...(agreement ? [agreement[i] == null ? '-' : percent(agreement[i])] : []),
  ]);
  return textTable(header, rows);
}

function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  // The row's label reads from the left, the figures line up on the right.
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/**
 * Whether each phase helped, for the terminal: a row per phase, then the last phase per task type
 * (every phase per type is in the HTML report); '' when no evaluation stored its tasks.
 */
export function renderEvidenceText(evidence: PhaseEvidence[]): string {
  if (!evidence.length) return '';
  const last = evidence[evidence.length - 1]!;
  const groups = Object.keys(last.byGroup);
  const rows = evidence.map((e) => [e.phase === 0 ? '0 (SFT)' : String(e.phase), ...evidenceCells(e)]);
  if (groups.length > 1) rows.push(...groups.map((group) => [`${last.phase} ${group}`, ...evidenceCells(last, group)]));
  return [
    'Did each phase help? Held-out success with its 95% Wilson interval; against SFT and the phase before it, the paired',
    "difference over the same tasks in points, its paired bootstrap 95% interval and McNemar's exact p (better/worse: both agree).",
    textTable(['phase', ...EVIDENCE_COLUMNS], rows),
  ].join('\n');
}

const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b'];

/** Text for HTML and SVG (XML): markup characters and quotes escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The success chart; `evidence` draws the overall line's 95% interval as a bar at each phase it covers. */
export function renderSuccessChartSvg(title: string, summaries: PhaseSummary[], evidence: PhaseEvidence[] = []): string {
  const width = 720;
  const height = 400;
  const margin = { left: 60, right: 150, top: 40, bottom: 50 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const maxPhase = Math.max(1, ...summaries.map((s) => s.phase));
  const x = (phase: number) => margin.left + (phase / maxPhase) * plotW;
  const y = (rate: number) => margin.top + (1 - rate) * plotH;
  const sites = [...new Set(summaries.flatMap((s) => Object.keys(s.perSite)))].sort();
  const series: Array<{ name: string; points: Array<[number, number]>; strong: boolean }> = [
    { name: 'overall', points: summaries.map((s) => [s.phase, s.successRate]), strong: true },
    ...sites.map((site) => ({
      name: site,
      points: summaries.filter((s) => site in s.perSite).map((s): [number, number] => [s.phase, s.perSite[site]!]),
      strong: false,
    })),
  ];
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${margin.left}" y="24" font-size="15" font-weight="bold">${escapeHtml(title)}</text>`,
  ];
  for (let tick = 0; tick <= 10; tick += 2) {
    const rate = tick / 10;
    parts.push(`<line x1="${margin.left}" x2="${margin.left + plotW}" y1="${y(rate)}" y2="${y(rate)}" stroke="#ddd"/>`);
    parts.push(`<text x="${margin.left - 8}" y="${y(rate) + 4}" text-anchor="end">${tick * 10}%</text>`);
  }
  for (let phase = 0; phase <= maxPhase; phase++) {
    parts.push(`<text x="${x(phase)}" y="${margin.top + plotH + 18}" text-anchor="middle">${phase === 0 ? 'SFT' : phase}</text>`);
  }
  parts.push(`<text x="${margin.left + plotW / 2}" y="${height - 10}" text-anchor="middle">phase</text>`);
  parts.push(`<text transform="translate(16 ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle">test-split success</text>`);
  series.forEach((s, i) => {
    const color = s.strong ? '#000' : COLORS[i % COLORS.length]!;
    // The legend's sample of a line is drawn with the same stroke as the line itself.
    const stroke = `stroke="${color}" stroke-width="${s.strong ? 3 : 1.5}"${s.strong ? '' : ' stroke-dasharray="5 3"'}`;
    const path = s.points.map(([p, r], j) => `${j ? 'L' : 'M'}${x(p).toFixed(1)},${y(r).toFixed(1)}`).join(' ');
    parts.push(`<path d="${path}" fill="none" ${stroke}/>`);
    for (const [p, r] of s.points) parts.push(`<circle cx="${x(p).toFixed(1)}" cy="${y(r).toFixed(1)}" r="${s.strong ? 4 : 2.5}" fill="${color}"/>`);
    const legendY = margin.top + 10 + i * 18;
    parts.push(`<line x1="${width - margin.right + 15}" x2="${width - margin.right + 40}" y1="${legendY}" y2="${legendY}" ${stroke}/>`);
    parts.push(`<text x="${width - margin.right + 46}" y="${legendY + 4}">${escapeHtml(s.name)}</text>`);
  });
  const bars = evidence.filter((e) => e.phase <= maxPhase).map((e) => [e.phase, e.overall.interval] as const);
  for (const [phase, { low, high }] of bars) {
    const [cx, top, bottom] = [x(phase).toFixed(1), y(high).toFixed(1), y(low).toFixed(1)];
    const cap = (at: string) => `<line x1="${(x(phase) - 5).toFixed(1)}" x2="${(x(phase) + 5).toFixed(1)}" y1="${at}" y2="${at}" stroke="#000"/>`;
    parts.push(`<g class="interval"><line x1="${cx}" x2="${cx}" y1="${top}" y2="${bottom}" stroke="#000"/>${cap(top)}${cap(bottom)}</g>`);
  }
  if (bars.length) {
    const legendY = margin.top + 10 + series.length * 18;
    parts.push(`<text x="${width - margin.right + 15}" y="${legendY + 4}">bars: 95% interval</text>`);
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
