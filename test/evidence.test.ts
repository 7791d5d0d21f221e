/**
 * Whether a phase helped: the interval and McNemar arithmetic against hand-computed cases, the
 * pairing of two evaluations by task id, and how the reports show it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { learningFigures } from '../bench/learningFigures';
import { phaseEvidence, pairByTask, type EvaluatedTask, type PhaseEvidence } from '../campaign/evidence';
import { phaseHelpHtml } from '../campaign/htmlReport';
import { renderEvidenceText, renderSuccessChartSvg } from '../campaign/report';
import { exactMcNemarP, pairedDifference, wilsonInterval, type Pair } from '../campaign/statistics';
import type { PhaseSummary } from '../workflows/campaignTypes';

const near = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual}, expected ${expected} +- ${tolerance}`);

test("Wilson's 95% interval matches the hand-computed cases", () => {
  // 9 of 20: z^2/n = 0.19207, centre (0.45 + 0.09604) / 1.19207 = 0.45806, half-width
  // 1.95996 / 1.19207 * sqrt(0.45 * 0.55 / 20 + 3.84146 / 1600) = 0.19986.
  const nine = wilsonInterval(9, 20);
  near(nine.low, 0.2582, 5e-5, '9/20 low');
  near(nine.high, 0.6579, 5e-5, '9/20 high');
  // 0 of 10: centre and half-width are both 0.19207 / 1.38415 = 0.13877, so [0, 0.27753]; 10 of 10 mirrors it.
  assert.equal(wilsonInterval(0, 10).low, 0);
  near(wilsonInterval(0, 10).high, 0.27753, 5e-5, '0/10 high');
  near(wilsonInterval(10, 10).low, 1 - 0.27753, 5e-5, '10/10 low');
  assert.equal(wilsonInterval(10, 10).high, 1);
  assert.deepEqual(wilsonInterval(0, 0), { low: 0, high: 1 }, 'no episodes: nothing is known');
});

test("McNemar's exact p-value is the two-sided binomial tail of the discordant pairs", () => {
  // 8 improved, 2 worsened: 2 * (C(10,0) + C(10,1) + C(10,2)) / 2^10 = 2 * 56 / 1024.
  near(exactMcNemarP(8, 2), 112 / 1024, 1e-12, '8 vs 2');
  // 10 vs 3: 2 * (1 + 13 + 78 + 286) / 2^13.
  near(exactMcNemarP(10, 3), 756 / 8192, 1e-12, '10 vs 3');
  near(exactMcNemarP(6, 0), 2 / 64, 1e-12, '6 vs 0');
  assert.equal(exactMcNemarP(0, 6), exactMcNemarP(6, 0), 'two-sided: the direction does not matter');
  assert.equal(exactMcNemarP(5, 5), 1);
  assert.equal(exactMcNemarP(1, 0), 1, 'one discordant pair proves nothing');
  assert.equal(exactMcNemarP(0, 0), 1);
  // Thousands of pairs stay finite: 1100 vs 900 sits where the continuity-corrected normal
  // approximation puts it, 2 * Phi(-(200 - 1) / sqrt(2000)) = 8.6e-6.
  near(exactMcNemarP(1100, 900), 8.6e-6, 0.4e-6, '1100 vs 900');
  // 7,800 pairs (2^-7800 alone underflows a double): 2 * Phi(-(200 - 1) / sqrt(7800)) = 0.0243.
  near(exactMcNemarP(4000, 3800), 0.0243, 0.001, '4000 vs 3800');
});

const pairsOf = (improved: number, worsened: number, solvedBoth: number, failedBoth: number, prefix = ''): Pair[] => {
  const make = (count: number, before: number, after: number, tag: string) =>
    Array.from({ length: count }, (_, i) => ({ cluster: `${prefix}${tag}${i}`, before, after }));
  return [...make(improved, 0, 1, 'i'), ...make(worsened, 1, 0, 'w'), ...make(solvedBoth, 1, 1, 's'), ...make(failedBoth, 0, 0, 'f')];
};

test('the paired bootstrap interval: reproducible, where the normal approximation puts it, and pooled seeds resampled by task', () => {
  // 20 improved, 10 worsened, 70 concordant of 100: +0.10, standard error sqrt((0.30 - 0.01) / 100) = 0.0539,
  // so about [-0.006, +0.206].
  const pairs = pairsOf(20, 10, 30, 40);
  const d = pairedDifference(pairs, 7);
  assert.equal(d.pairs, 100);
  assert.equal(d.improved, 20);
  assert.equal(d.worsened, 10);
  near(d.difference, 0.1, 1e-12, 'difference');
  near(d.interval.low, -0.006, 0.015, 'low');
  near(d.interval.high, 0.206, 0.015, 'high');
  near(d.pValue, exactMcNemarP(20, 10), 0, 'p');
  assert.deepEqual(pairedDifference(pairs, 7), d, 'the same seed gives the same interval');

  // Both campaign seeds evaluated the same tasks with the same outcomes: the task (cluster) is
  // resampled with both its pairs, so the interval is the one seed's, not a narrower one.
  const twice = [...pairs, ...pairs];
  const pooled = pairedDifference(twice, 7);
  assert.equal(pooled.pairs, 200);
  assert.deepEqual(pooled.interval, d.interval);

  const unchanged = pairedDifference(pairsOf(0, 0, 5, 5), 7);
  assert.deepEqual(unchanged.interval, { low: 0, high: 0 });
  assert.equal(unchanged.pValue, 1);
});

/** An evaluation's tasks from each type's outcomes in seed order (`miniwob:<type>:1`, `:2`, ...). */
const outcomes = (byType: Record<string, number[]>): EvaluatedTask[] =>
  Object.entries(byType).flatMap(([type, scores]) => scores.map((score, i) => ({ taskId: `miniwob:${type}:${i + 1}`, site: 'miniwob', score })));

/** SFT solves 1 of 6; phase 1 solves 4 (3 improved, none worsened); phase 2 loses one and evaluates an extra task. */
const EVALUATIONS = [
  { phase: 0, tasks: outcomes({ 'click-button': [1, 0, 0, 0], 'enter-text': [0, 0] }) },
  { phase: 1, tasks: outcomes({ 'click-button': [1, 1, 1, 0], 'enter-text': [0, 1] }) },
  { phase: 2, tasks: outcomes({ 'click-button': [1, 1, 0, 0], 'enter-text': [0, 1, 1] }) },
];

test('each phase is compared task by task with SFT and with the phase before it, overall and per task type', () => {
  assert.equal(pairByTask(EVALUATIONS[1]!.tasks, EVALUATIONS[2]!.tasks).length, 6, 'only tasks both evaluated are paired');
  const evidence = phaseEvidence('c', [...EVALUATIONS, { phase: 3, tasks: [] }]);
  assert.deepEqual(
    evidence.map((e) => e.phase),
    [0, 1, 2],
    'an evaluation that stored no tasks is left out',
  );
  const [sft, first, second] = evidence;
  assert.equal(sft!.vsSft, undefined);
  assert.equal(sft!.vsPrevious, undefined);
  assert.equal(first!.vsPrevious, undefined, "phase 1's previous phase is SFT");
  assert.deepEqual([first!.overall.successes, first!.overall.episodes], [4, 6]);
  const { overall, byGroup } = first!.vsSft!;
  assert.deepEqual([overall.pairs, overall.improved, overall.worsened], [6, 3, 0]);
  near(overall.difference, 0.5, 1e-12, 'phase 1 vs SFT');
  assert.equal(overall.pValue, 0.25, '3 vs 0: 2 / 2^3');
  assert.deepEqual(Object.keys(byGroup), ['click-button', 'enter-text']);
  assert.deepEqual([byGroup['click-button']!.improved, byGroup['enter-text']!.improved], [2, 1]);
  assert.equal(second!.vsPrevious!.phase, 1);
  assert.deepEqual([second!.vsPrevious!.overall.pairs, second!.vsPrevious!.overall.worsened], [6, 1]);
  assert.deepEqual([second!.overall.successes, second!.overall.episodes], [4, 7], 'its own success counts every task it evaluated');
  assert.deepEqual([second!.byGroup['enter-text']!.successes, second!.vsSft!.byGroup['enter-text']!.pairs], [2, 2]);
});

/** The phase summaries the chart draws, from the evaluations' own success rates. */
const summaries = (evidence: PhaseEvidence[]): PhaseSummary[] =>
  evidence.map((e) => ({ phase: e.phase, manifestKey: `m${e.phase}`, successRate: e.overall.rate, perSite: {}, ...ZERO_COUNTS }));
const ZERO_COUNTS = { tasksGenerated: 0, tasksKept: 0, trajectories: 0, rolloutSuccesses: 0, trainingSteps: 0, replayedSteps: 0 };

test('the reports show the intervals: the text table, the chart and the phase page', () => {
  const evidence = phaseEvidence('c', EVALUATIONS);
  const text = renderEvidenceText(evidence);
  const rows = text.split('\n');
  assert.match(rows[0]!, /^Did each phase help\?/);
  // 4 of 6: Wilson [0.3000, 0.9033]; +50 points against SFT, McNemar 3 vs 0.
  assert.match(text, /^\s*1\s+6\s+66\.7% \[30\.0, 90\.3\]\s+\+50\.0 \[\+\d+\.\d, \+\d+\.\d\]\s+0\.250\s+no detectable change\s+-\s+-$/m);
  assert.match(text, /^\s*0 \(SFT\)\s+6\s+16\.7% \[3\.0, 56\.4\]\s+-\s+-\s+-\s+-\s+-$/m);
  assert.match(text, /^\s*2 click-button\s+4\s+50\.0% /m, 'the last phase per task type');
  assert.match(text, /^\s*2 enter-text\s+3\s+66\.7% /m);
  assert.equal(renderEvidenceText([]), '');

  const svg = renderSuccessChartSvg('t', summaries(evidence), evidence);
  assert.equal([...svg.matchAll(/<g class="interval">/g)].length, 3, 'a bar per evaluated phase');
  assert.match(svg, /bars: 95% interval/);
  assert.doesNotMatch(renderSuccessChartSvg('t', summaries(evidence)), /class="interval"/);

  const page = phaseHelpHtml(evidence[2]);
  assert.match(page, /<h2>Did this phase help\?<\/h2>/);
  assert.match(page, /Against SFT \(phase 0\), over the 6 tasks both evaluated: \+33\.3 \[[^\]]+\] points/);
  assert.match(page, /Against phase 1, over the 6 tasks both evaluated: -16\.7 \[[^\]]+\] points \(95% interval\), 0 solved now and not then, 1 the other way/);
  assert.match(page, /<td>enter-text<\/td><td>3<\/td><td>66\.7% \[/);
  assert.match(phaseHelpHtml(undefined), /stored no per-task outcomes/);
});

test("bench:learning's figures: success over the seeds, and the gain over SFT with its interval pooled over both seeds' pairs", () => {
  const scores = (cb1: number, cb2: number, et1: number, et2: number) => outcomes({ 'click-button': [cb1, cb2], 'enter-text': [et1, et2] });
  const runs = [
    { phases: [scores(1, 0, 0, 0), scores(1, 1, 0, 0), scores(1, 1, 1, 0)], zeroShot: scores(0, 0, 0, 0) },
    { phases: [scores(1, 1, 0, 0), scores(1, 1, 0, 0), scores(1, 0, 1, 0)] },
  ];
  const figures = learningFigures(runs, ['click-button', 'enter-text'], 3);
  const value = Object.fromEntries(figures.map(([name, v]) => [name, v]));
  assert.deepEqual(
    figures.slice(0, 9).map(([name, , unit]) => `${name} ${unit}`),
    [
      'learning.zero_shot success',
      'learning.sft success',
      'learning.phase1 success',
      'learning.phase2 success',
      'learning.final success',
      'learning.gain_over_sft points',
      'learning.gain_over_sft.ci_low points',
      'learning.gain_over_sft.ci_high points',
      'learning.eval_episodes episodes',
    ],
  );
  assert.equal(value['learning.zero_shot'], 0);
  assert.equal(value['learning.sft'], (0.25 + 0.5) / 2);
  assert.equal(value['learning.final'], (0.75 + 0.5) / 2);
  // 8 pooled pairs, 3 improved and 1 worsened: +25 points, the final minus SFT above.
  assert.equal(value['learning.gain_over_sft'], 25);
  assert.ok(value['learning.gain_over_sft.ci_low']! < 25 && value['learning.gain_over_sft.ci_high']! > 25);
  assert.equal(value['learning.eval_episodes'], 4);
  assert.equal(value['learning.click-button.final'], 0.75);
  assert.equal(value['learning.enter-text.sft'], 0);
  assert.throws(() => learningFigures([runs[1]!], [], 3), /no zero-shot evaluation/);
});
