/** The campaign report's charts: the legend draws each series' line as the plot draws it; the per-task-type curve. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { taskTypeCurveHtml } from '../campaign/htmlReport';
import { renderSuccessChartSvg } from '../campaign/report';
import type { PhaseSummary } from '../workflows/campaignTypes';

const summary = (phase: number, successRate: number, perSite: Record<string, number>): PhaseSummary => ({
  phase,
  manifestKey: `campaigns/x/phases/${phase}/manifest.json`,
  successRate,
  perSite,
  tasksGenerated: 0,
  tasksKept: 0,
  trajectories: 0,
  rolloutSuccesses: 0,
  trainingSteps: 0,
  replayedSteps: 0,
});

test("the chart's legend samples use the same stroke as the lines they name", () => {
  const svg = renderSuccessChartSvg('t', [summary(0, 0.3, { reddit: 0.2, gitlab: 0.4 }), summary(1, 0.35, { reddit: 0.3, gitlab: 0.4 })]);
  const strokeOf = (element: string) => /stroke="[^"]+" stroke-width="[^"]+"(?: stroke-dasharray="[^"]+")?/.exec(element)?.[0];
  const paths = [...svg.matchAll(/<path [^>]*\/>/g)].map((m) => strokeOf(m[0]));
  const legend = [...svg.matchAll(/<line x1="(\d+)"[^>]*\/>/g)].filter((m) => Number(m[1]) > 500).map((m) => strokeOf(m[0]));
  assert.equal(paths.length, 3, 'overall and one line per site');
  assert.deepEqual(legend, paths);
  assert.ok(
    paths.slice(1).every((stroke) => stroke?.includes('stroke-dasharray')),
    'per-site lines are dashed, in the plot and the legend',
  );
});

test('the HTML report has a curve per MiniWoB++ task type, and none for tasks without a type', () => {
  const task = (taskId: string, score: number) => ({ taskId, site: 'miniwob', score, steps: 1, answer: null });
  const html = taskTypeCurveHtml(
    'c',
    [summary(0, 0.5, { miniwob: 0.5 }), summary(1, 0.75, { miniwob: 0.75 })],
    [
      [task('miniwob:click-button:1000', 1), task('miniwob:click-button:1001', 0), task('miniwob:enter-text:1000', 1), task('miniwob:enter-text:1001', 0)],
      [task('miniwob:click-button:1000', 1), task('miniwob:click-button:1001', 1), task('miniwob:enter-text:1000', 1), task('miniwob:enter-text:1001', 0)],
    ],
  );
  assert.match(html, /<th>phase<\/th><th>all<\/th><th>click-button<\/th><th>enter-text<\/th>/);
  assert.match(html, /<td>0 \(SFT\)<\/td><td>50\.0%<\/td><td>50\.0%<\/td><td>50\.0%<\/td>/);
  assert.match(html, /<td>1<\/td><td>75\.0%<\/td><td>100\.0%<\/td><td>50\.0%<\/td>/);
  assert.equal([...html.matchAll(/<path /g)].length, 3, 'overall and one line per type');
  assert.equal(taskTypeCurveHtml('c', [summary(0, 1, { shopping: 1 })], [[task('12', 1)]]), '');
});
