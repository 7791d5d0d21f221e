/**
 * Losses and their gradients with respect to the network's logits. Each returns the batch loss and
 * dLoss/dLogits laid out like the logits, for `network.backward`.
 *
 * WebRL actor objective (webrl.md §1), mapped onto the candidate-softmax actor:
 *   v = min(v1, v2)(s_t), nv = min(nv1, nv2)(s_t+1), nv = 0 after the last step (no next state);
 *   advantage = clip(nv - v - 0.05 + reward + mc_return, -1, 1), then +1 if >= 0 else -0.6;
 *   log pi(a|s) = log-softmax of the candidate scores at a's candidate (ACTION_TOKENS = 1, so the
 *   per-token division of log_ratio and ref_prob = exp(mean ref token log-prob) are by 1);
 *   log_ratio = (log pi - log pi_ref) / tokens, pi_ref = the previous phase's actor;
 *   beta = high (5) where (adv >= 0 and ref_prob >= 0.8) or (adv < 0 and ref_prob < 0.9), else low (1),
 *   then beta = min(beta, |adv / log_ratio|); beta is a constant of the step (no gradient through it);
 *   loss = mean over the batch of (1/beta) * SmoothL1(beta * log_ratio, adv) * [adv > 0], SmoothL1 with
 *   threshold 1 (PyTorch's default). A sample whose action is not a candidate contributes 0 (its log pi
 *   is a constant floor) but still counts in the mean, as a masked sample does in the repository.
 */
import { logSoftmax } from '../actor';

export interface LossResult {
  loss: number;
  dLogits: Float64Array;
}

/** One state's candidates inside the stacked logits, and which one was taken (-1: none). */
export interface CandidateGroup {
  offset: number;
  count: number;
  target: number;
}

/** Behaviour cloning: mean over states of -log softmax(candidate scores)[demonstrated candidate]. */
export function demonstrationLoss(logits: Float64Array, groups: readonly CandidateGroup[]): LossResult {
  const dLogits = new Float64Array(logits.length);
  let loss = 0;
  for (const group of groups) {
    const logProbs = logSoftmax(logits.subarray(group.offset, group.offset + group.count));
    loss -= logProbs[group.target]!;
    for (let j = 0; j < group.count; j++) {
      dLogits[group.offset + j] = (Math.exp(logProbs[j]!) - (j === group.target ? 1 : 0)) / groups.length;
    }
  }
  return { loss: loss / groups.length, dLogits };
}

const softplus = (x: number) => (x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x)));

/**
 * Binary cross-entropy on every output column against the row's label, averaged over rows and columns
 * (the critic's two heads both learn `mc_return > 0`; the ORM's one head learns success).
 */
export function binaryLoss(logits: Float64Array, outputs: number, labels: readonly number[]): LossResult {
  const dLogits = new Float64Array(logits.length);
  const count = labels.length * outputs;
  let loss = 0;
  labels.forEach((label, r) => {
    for (let o = 0; o < outputs; o++) {
      const z = logits[r * outputs + o]!;
      loss += softplus(z) - label * z;
      dLogits[r * outputs + o] = (1 / (1 + Math.exp(-z)) - label) / count;
    }
  });
  return { loss: loss / count, dLogits };
}

export interface AdvantageInput {
  value: number;
  nextValue: number;
  reward: number;
  mcReturn: number;
}

export const POSITIVE_ADVANTAGE = 1;
export const NEGATIVE_ADVANTAGE = -0.6;

export function webrlAdvantage({ value, nextValue, reward, mcReturn }: AdvantageInput): number {
  const raw = Math.max(-1, Math.min(1, nextValue - value - 0.05 + reward + mcReturn));
  return raw >= 0 ? POSITIVE_ADVANTAGE : NEGATIVE_ADVANTAGE;
}

export interface BetaRule {
  low: number;
  high: number;
}

export const WEBRL_BETA: BetaRule = { low: 1, high: 5 };

export function webrlBeta(advantage: number, refProb: number, logRatio: number, rule: BetaRule = WEBRL_BETA): number {
  const strong = (advantage >= 0 && refProb >= 0.8) || (advantage < 0 && refProb < 0.9);
  const beta = strong ? rule.high : rule.low;
  return logRatio === 0 ? beta : Math.min(beta, Math.abs(advantage / logRatio));
}

function smoothL1(x: number): { value: number; slope: number } {
  const a = Math.abs(x);
  return a < 1 ? { value: 0.5 * x * x, slope: x } : { value: a - 0.5, slope: Math.sign(x) };
}

export interface WebRLSample {
  group: CandidateGroup;
  refLogProb: number;
  advantage: number;
  tokens: number;
}

export interface WebRLLossResult extends LossResult {
  betas: number[];
  logRatios: number[];
}

export function webrlActorLoss(logits: Float64Array, samples: readonly WebRLSample[], rule: BetaRule = WEBRL_BETA): WebRLLossResult {
  const dLogits = new Float64Array(logits.length);
  const betas: number[] = [];
  const logRatios: number[] = [];
  let loss = 0;
  for (const sample of samples) {
    const { group, refLogProb, advantage, tokens } = sample;
    if (group.target < 0) {
      betas.push(0);
      logRatios.push(0);
      continue;
    }
    const logProbs = logSoftmax(logits.subarray(group.offset, group.offset + group.count));
    const logRatio = (logProbs[group.target]! - refLogProb) / tokens;
    const refProb = Math.exp(refLogProb / tokens);
    const beta = webrlBeta(advantage, refProb, logRatio, rule);
    betas.push(beta);
    logRatios.push(logRatio);
    if (!(advantage > 0)) continue;
    const { value, slope } = smoothL1(beta * logRatio - advantage);
    loss += value / beta;
    // d/dlogpi of (1/beta) * SmoothL1(beta * (logpi - ref) / tokens - adv) = slope / tokens.
    const dLogPi = slope / tokens / samples.length;
    for (let j = 0; j < group.count; j++) {
      dLogits[group.offset + j] = dLogPi * ((j === group.target ? 1 : 0) - Math.exp(logProbs[j]!));
    }
  }
  return { loss: loss / samples.length, dLogits, betas, logRatios };
}
