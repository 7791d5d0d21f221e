/**
 * How far the ORM's verdicts move on task types it never trained on, measured on its own training data.
 *
 * Much of an ORM's evidence for YES is crossed with the task type ("the title names the order" counts for
 * the order tasks it saw succeed). On a task type it never saw, those features are absent, and the
 * generic evidence alone leans NO: bench:models' held-out templates were judged right 0.69 of the time,
 * trained ones 0.95, and nearly all of the misses were successes judged NO.
 *
 * Cross-validation by task type estimates the shift: the training trajectories are split into folds by
 * task type, a model trained on the other folds judges each fold (every trajectory of which is then of an
 * unseen type), and the logit offset that makes the most of those verdicts right is kept, the accuracy
 * averaged over a +/-0.5 window so one lucky grid point cannot pick it (among equals, the middle one).
 * At judging time the offset is added to the logit of P(YES) for a trajectory whose task type is not
 * among the training ones. The graph itself is unchanged: the offset and the known types travel in the
 * card.
 */
import { SeededRng, deriveSeed } from '../../browser/rng';
import { taskType } from '../featurizer';
import type { OutcomeExample } from './examples';

/** What the card carries for `Orm` to apply. */
export interface UnseenTypeCalibration {
  /** The task types of the training trajectories, sorted. */
  knownTaskTypes: string[];
  /** Added to logit P(YES) of a trajectory whose task type is not among `knownTaskTypes`. */
  unseenTypeLogitOffset: number;
}

export interface CalibrationOutcome {
  calibration: UnseenTypeCalibration;
  metrics: Record<string, number>;
}

export const CALIBRATION_FOLDS = 3;
/** Fold assignments, each from its own shuffle of the task types: one split's luck moved the offset by ~1. */
export const CALIBRATION_REPEATS = 2;
const OFFSET_GRID = Array.from({ length: 101 }, (_, i) => Math.round((-4 + i * 0.1) * 10) / 10);
/** Grid points either side that the accuracy is averaged over: +/-0.5 at the grid's 0.1 step. */
const WINDOW = 5;

/** Trains a fresh model on the examples at `training` and returns the logit of P(YES) of each example at `judged`. */
export type FoldFit = (training: number[], judged: number[], seed: number) => number[];

/** The fold models a calibration trains (none when the examples hold fewer task types than folds). */
export const CALIBRATION_FITS = CALIBRATION_REPEATS * CALIBRATION_FOLDS;

/**
 * The unseen-type offset for an ORM trained on `examples`; offset 0 (no correction) when the examples
 * hold fewer task types than folds.
 */
export function calibrateUnseenTypes(examples: readonly OutcomeExample[], seed: number, fit: FoldFit): CalibrationOutcome {
  const typeOf = examples.map((example) => taskType(example.state.intent));
  const knownTaskTypes = [...new Set(typeOf)].sort();
  if (knownTaskTypes.length < CALIBRATION_FOLDS)
    return { calibration: { knownTaskTypes, unseenTypeLogitOffset: 0 }, metrics: { unseenTypeCvExamples: 0, unseenTypeLogitOffset: 0 } };

  const judged: { logit: number; success: boolean }[] = [];
  for (let repeat = 0; repeat < CALIBRATION_REPEATS; repeat++) {
    const order = new SeededRng(deriveSeed(seed, 'unseen-type-folds', repeat)).permutation(knownTaskTypes.length);
    const foldOfType = new Map(order.map((typeIndex, position) => [knownTaskTypes[typeIndex]!, position % CALIBRATION_FOLDS]));
    for (let fold = 0; fold < CALIBRATION_FOLDS; fold++) {
      const training = typeOf.flatMap((type, i) => (foldOfType.get(type) === fold ? [] : [i]));
      const validation = typeOf.flatMap((type, i) => (foldOfType.get(type) === fold ? [i] : []));
      const logits = fit(training, validation, deriveSeed(seed, 'unseen-type-fit', repeat, fold));
      validation.forEach((index, i) => judged.push({ logit: logits[i]!, success: examples[index]!.success }));
    }
  }

  const accuracyAt = (offset: number) => judged.filter((row) => row.logit + offset >= 0 === row.success).length / judged.length;
  const accuracies = OFFSET_GRID.map(accuracyAt);
  const smoothed = OFFSET_GRID.map((_, i) => {
    const window = accuracies.slice(Math.max(0, i - WINDOW), i + WINDOW + 1);
    return window.reduce((sum, value) => sum + value, 0) / window.length;
  });
  // The best smoothed accuracy; where several offsets reach it, the middle one (the widest margin).
  const top = Math.max(...smoothed);
  const ties = OFFSET_GRID.flatMap((_, i) => (smoothed[i]! >= top - 1e-12 ? [i] : []));
  const best = ties[Math.floor((ties.length - 1) / 2)]!;
  const offset = OFFSET_GRID[best]!;
  return {
    calibration: { knownTaskTypes, unseenTypeLogitOffset: offset },
    metrics: {
      unseenTypeCvExamples: judged.length,
      unseenTypeCvAccuracy: accuracyAt(0),
      unseenTypeCvAccuracyCalibrated: accuracyAt(offset),
      unseenTypeLogitOffset: offset,
    },
  };
}
