/**
 * The local actor: a softmax over the state's candidate actions (candidates.ts), each scored by the
 * network from its featurizer row. It acts (greedy for evaluation, or sampled with a temperature from a
 * seeded RNG) and gives the log-probability of any action string.
 *
 * Action tokens: this model emits an action as ONE draw from the candidate softmax, so every action is
 * one "token" (ACTION_TOKENS = 1). Its sequence log-prob and mean token log-prob are both log pi(a|s),
 * the WebRL perplexity rank exp(mean token log-prob) is pi(a|s), and log_ratio needs no length division.
 *
 * Actions outside the candidate set (unparseable outputs, unknown element ids, arguments that no intent
 * phrase, option or page text produced) have no mass under this model; they get FLOOR_LOG_PROB, a
 * constant, so they carry no gradient and the replay filter (rank > 0.5) drops them.
 */
import type { Action } from '../browser/contract';
import { formatAction, parseAction } from '../browser/grammar';
import { buildCandidates, type Candidate } from './candidates';
import type { ModelHandle } from './checkpoint';
import { concatBatches, featurizeCandidates, ACTOR_ROW_WIDTH, type FeatureBatch } from './featurizer';
import type { SeededRng } from '../browser/rng';
import type { ModelState } from './state';

export const ACTION_TOKENS = 1;
/** log(1e-6): the log-prob given to an action this model cannot produce. */
export const FLOOR_LOG_PROB = Math.log(1e-6);

export interface ActionDistribution {
  candidates: Candidate[];
  /** Raw network scores, one per candidate. */
  scores: Float64Array;
  /** log-softmax of the scores over the candidates. */
  logProbs: Float64Array;
}

export interface ActorDecision {
  /** The WebRL-grammar string (`formatAction`). */
  response: string;
  action: Action;
  /** log pi(a|s) of the policy itself (temperature 1), whatever temperature the action was drawn at. */
  logProb: number;
  candidates: number;
}

export interface ScoredAction {
  state: ModelState;
  /** A raw model output (parsed with the WebRL grammar). */
  response: string;
}

export interface ActionLogProb {
  /** Sequence log-prob: sum over the action's tokens. */
  logProb: number;
  tokens: number;
  meanTokenLogProb: number;
  /** False when the action is not among this model's candidates (the log-prob is then the floor). */
  inCandidates: boolean;
}

/** What both the local actor and the remote (LLM) actor offer: log-probs of given actions, batched. */
export interface ActionScorer {
  logProbs(items: readonly ScoredAction[]): Promise<ActionLogProb[]>;
}

export type ActMode = { mode: 'greedy' } | { mode: 'sample'; temperature: number; rng: SeededRng };

export function logSoftmax(scores: ArrayLike<number>, temperature = 1): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < scores.length; i++) max = Math.max(max, scores[i]! / temperature);
  let sum = 0;
  for (let i = 0; i < scores.length; i++) sum += Math.exp(scores[i]! / temperature - max);
  const logZ = max + Math.log(sum);
  const out = new Float64Array(scores.length);
  for (let i = 0; i < scores.length; i++) out[i] = scores[i]! / temperature - logZ;
  return out;
}

/** Candidates and featurizer rows of many states, stacked for one batched engine call. */
export interface CandidateBatch {
  candidates: Candidate[][];
  /** Row offset of each state's first candidate; one extra entry holds the total. */
  offsets: number[];
  batch: FeatureBatch;
}

export function candidateBatch(states: readonly ModelState[]): CandidateBatch {
  const candidates = states.map((state) => buildCandidates(state.intent, state.observation));
  const offsets = [0];
  for (const list of candidates) offsets.push(offsets[offsets.length - 1]! + list.length);
  const batch = concatBatches(
    states.map((state, i) => featurizeCandidates(state, candidates[i]!)),
    ACTOR_ROW_WIDTH,
  );
  return { candidates, offsets, batch };
}

/**
 * The index of `response`'s action among `candidates`, or -1 (unparseable or not a candidate). A
 * Select Dropdown Option whose argument is part of an option's text maps to the option the executor
 * would pick (the first whose text contains it, case-insensitively), so "Blue" finds "Blue (+$2)".
 */
export function candidateIndex(candidates: readonly Candidate[], response: string): number {
  const parsed = parseAction(response);
  if (!parsed.ok) return -1;
  const action = parsed.action;
  const key = formatAction(action);
  const exact = candidates.findIndex((candidate) => candidate.key === key);
  if (exact >= 0 || action.kind !== 'Select Dropdown Option') return exact;
  const wanted = action.argument.toLowerCase();
  const options = candidates.find((candidate) => candidate.element?.id === action.element)?.element?.options ?? [];
  const option = options.find((text) => text.toLowerCase().includes(wanted));
  if (option === undefined) return -1;
  const optionKey = formatAction({ ...action, argument: option });
  return candidates.findIndex((candidate) => candidate.key === optionKey);
}

export class Actor implements ActionScorer {
  constructor(readonly model: ModelHandle) {}

  async distributions(states: readonly ModelState[]): Promise<ActionDistribution[]> {
    if (states.length === 0) return [];
    const { candidates, offsets, batch } = candidateBatch(states);
    const scores = await this.model.engine.run(batch);
    return candidates.map((list, i) => {
      const own = scores.slice(offsets[i]!, offsets[i + 1]!);
      return { candidates: list, scores: own, logProbs: logSoftmax(own) };
    });
  }

  async act(state: ModelState, how: ActMode): Promise<ActorDecision> {
    const [distribution] = await this.distributions([state]);
    const { candidates, scores, logProbs } = distribution!;
    let chosen = 0;
    if (how.mode === 'greedy') {
      // Ties go to the earliest candidate, so greedy decisions are deterministic.
      for (let i = 1; i < scores.length; i++) if (scores[i]! > scores[chosen]!) chosen = i;
    } else {
      const tempered = logSoftmax(scores, how.temperature);
      let u = how.rng.next();
      chosen = tempered.length - 1;
      for (let i = 0; i < tempered.length; i++) {
        u -= Math.exp(tempered[i]!);
        if (u < 0) {
          chosen = i;
          break;
        }
      }
    }
    const candidate = candidates[chosen]!;
    return { response: candidate.key, action: candidate.action, logProb: logProbs[chosen]!, candidates: candidates.length };
  }

  async logProbs(items: readonly ScoredAction[]): Promise<ActionLogProb[]> {
    const distributions = await this.distributions(items.map((item) => item.state));
    return items.map((item, i) => {
      const { candidates, logProbs } = distributions[i]!;
      const index = candidateIndex(candidates, item.response);
      const logProb = index < 0 ? FLOOR_LOG_PROB : logProbs[index]!;
      return { logProb, tokens: ACTION_TOKENS, meanTokenLogProb: logProb / ACTION_TOKENS, inCandidates: index >= 0 };
    });
  }
}
