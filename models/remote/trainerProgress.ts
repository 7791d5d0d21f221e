/**
 * An external trainer's progress, as it prints it: `PROGRESS <fraction> [<step>/<total>]` on a line of its
 * own (webrl-torch prints both; a trainer of the user's may print the fraction alone), and the time left
 * a job's pace since its first report gives, which the campaign's live line shows beside the steps.
 */

export interface TrainerProgress {
  /** In [0, 1]. */
  fraction: number;
  /** Steps done and the job's total, when the trainer counts them. */
  step?: number;
  totalSteps?: number;
}

const PROGRESS_LINE = /^\s*PROGRESS\s+([0-9]*\.?[0-9]+(?:e-?\d+)?)(?:\s+(\d+)\/(\d+))?\s*$/i;

/** The progress a line reports, or undefined for any other line. */
export function parseProgressLine(line: string): TrainerProgress | undefined {
  const match = PROGRESS_LINE.exec(line);
  if (!match) return undefined;
  const fraction = Math.max(0, Math.min(1, Number(match[1])));
  if (match[2] === undefined) return { fraction };
  return { fraction, step: Number(match[2]), totalSteps: Number(match[3]) };
}

/**
 * Seconds left at each report, from the pace since the first one: loading the models comes before it, so
 * it is not taken for training, and a resumed job's steps done before are not counted as fast ones.
 * Undefined until the job has moved since its first report.
 */
export function timeLeftEstimator(now: () => number = Date.now): (fraction: number) => number | undefined {
  let first: { at: number; fraction: number } | undefined;
  return (fraction) => {
    const at = now();
    first ??= { at, fraction };
    const done = fraction - first.fraction;
    if (done <= 0 || at <= first.at) return undefined;
    return Math.round(((1 - fraction) * (at - first.at)) / done / 1000);
  };
}
