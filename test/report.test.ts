/** The campaign report's chart: its legend draws each series' line as the plot draws it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
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
  assert.ok(paths.slice(1).every((stroke) => stroke?.includes('stroke-dasharray')), 'per-site lines are dashed, in the plot and the legend');
});
