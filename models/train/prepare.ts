/**
 * Turns validated examples into what one training step needs: featurizer rows, targets and, for the
 * WebRL objective, the fixed per-sample quantities (critic values, advantage, reference log-prob) that
 * are computed once before the first step because the critic and the reference do not change.
 */
import { candidateIndex, logSoftmax, ACTION_TOKENS } from '../actor';
import { buildCandidates } from '../candidates';
import { MODEL_SPECS, type ModelKind } from '../checkpoint';
import { sigmoid } from '../engine';
import { ACTOR_ROW_WIDTH, concatBatches, featurizeCandidates, featurizeOutcomes, featurizeStates, STATE_ROW_WIDTH, type FeatureBatch } from '../featurizer';
import { backward, emptyGradient, forward, type Gradient, type Network } from '../network';
import type { ModelState } from '../state';
import type { DemonstrationExample, ObjectiveData, OutcomeExample, WebRLStepExample } from './examples';
import { binaryLoss, demonstrationLoss, webrlActorLoss, webrlAdvantage, type BetaRule, type CandidateGroup, type LossResult } from './objectives';

export interface PreparedTask {
  kind: ModelKind;
  /** Examples a step can draw. */
  size: number;
  /** The training examples behind them, where each gives more than one (default: size). */
  sourceExamples?: number;
  /** Examples dropped because their action is not among the actor's candidates. */
  skipped: number;
  lossAndGradient(network: Network, examples: readonly number[]): { loss: number; gradient: Gradient };
  /** Metrics of the network on the training examples (for the card). */
  evaluate(network: Network): Record<string, number>;
  /** ORM only: its outcomes' rows, featurized once, which the unseen-type calibration's folds reuse. */
  outcomes?: OutcomeViews;
}

export interface FrozenModels {
  /** actor-webrl: the previous phase's actor. */
  reference?: Network;
  /** actor-webrl: the critic giving v and nv. */
  critic?: Network;
}

export function selectRows(batch: FeatureBatch, rows: readonly number[]): FeatureBatch {
  const { width } = batch;
  const indices = new Int32Array(rows.length * width);
  const values = new Float32Array(rows.length * width);
  rows.forEach((row, i) => {
    indices.set(batch.indices.subarray(row * width, (row + 1) * width), i * width);
    values.set(batch.values.subarray(row * width, (row + 1) * width), i * width);
  });
  return { rows: rows.length, width, indices, values };
}

/** Rows kept across steps, at most this many (about 1 KiB each), evicting the oldest first. */
const CACHED_ACTOR_ROWS = 100_000;

/** A state's candidate rows, featurized on first use and kept while the cache has room. */
class CandidateRows {
  private readonly cache = new Map<number, FeatureBatch>();
  private cachedRows = 0;

  constructor(private readonly states: readonly ModelState[]) {}

  get(i: number): FeatureBatch {
    const hit = this.cache.get(i);
    if (hit) return hit;
    const state = this.states[i]!;
    const rows = featurizeCandidates(state, buildCandidates(state.intent, state.observation));
    this.cache.set(i, rows);
    this.cachedRows += rows.rows;
    for (const [key, old] of this.cache) {
      if (this.cachedRows <= CACHED_ACTOR_ROWS || key === i) break;
      this.cache.delete(key);
      this.cachedRows -= old.rows;
    }
    return rows;
  }
}

function stackGroups(rows: CandidateRows, examples: readonly number[], targets: readonly number[]): { batch: FeatureBatch; groups: CandidateGroup[] } {
  const parts = examples.map((i) => rows.get(i));
  const groups: CandidateGroup[] = [];
  let offset = 0;
  parts.forEach((part, j) => {
    groups.push({ offset, count: part.rows, target: targets[examples[j]!]! });
    offset += part.rows;
  });
  return { batch: concatBatches(parts, ACTOR_ROW_WIDTH), groups };
}

function step(network: Network, batch: FeatureBatch, loss: (logits: Float64Array) => LossResult): { loss: number; gradient: Gradient } {
  const pass = forward(network, batch);
  const result = loss(pass.logits);
  const gradient = emptyGradient(network.shape);
  backward(network, batch, pass, result.dLogits, gradient);
  return { loss: result.loss, gradient };
}

/** Whether the highest-scoring candidate of each example is its target. */
function greedyAccuracy(network: Network, rows: CandidateRows, size: number, targets: readonly number[]): number {
  if (size === 0) return 0;
  let hits = 0;
  for (let i = 0; i < size; i++) {
    const { logits } = forward(network, rows.get(i));
    let best = 0;
    for (let j = 1; j < logits.length; j++) if (logits[j]! > logits[best]!) best = j;
    if (best === targets[i]) hits++;
  }
  return hits / size;
}

function prepareDemonstrations(all: readonly DemonstrationExample[]): PreparedTask {
  const usable: DemonstrationExample[] = [];
  const targets: number[] = [];
  for (const example of all) {
    const target = candidateIndex(buildCandidates(example.state.intent, example.state.observation), example.response);
    if (target < 0) continue;
    usable.push(example);
    targets.push(target);
  }
  const rows = new CandidateRows(usable.map((example) => example.state));
  return {
    kind: 'actor',
    size: usable.length,
    skipped: all.length - usable.length,
    lossAndGradient(network, examples) {
      const { batch, groups } = stackGroups(rows, examples, targets);
      return step(network, batch, (logits) => demonstrationLoss(logits, groups));
    },
    evaluate: (network) => ({
      trainAccuracy: greedyAccuracy(network, rows, usable.length, targets),
      coveredDemonstrations: all.length === 0 ? 0 : usable.length / all.length,
    }),
  };
}

function prepareBinary(kind: 'critic' | 'orm', batch: FeatureBatch, labels: number[]): PreparedTask {
  const outputs = MODEL_SPECS[kind].outputs;
  return {
    kind,
    size: labels.length,
    skipped: 0,
    lossAndGradient(network, examples) {
      const selected = examples.map((i) => labels[i]!);
      return step(network, selectRows(batch, examples), (logits) => binaryLoss(logits, outputs, selected));
    },
    evaluate(network) {
      const { logits } = forward(network, batch);
      let hits = 0;
      labels.forEach((label, r) => {
        // The critic's decision uses min(v1, v2), as the actor objective does.
        let p = 1;
        for (let o = 0; o < outputs; o++) p = Math.min(p, sigmoid(logits[r * outputs + o]!));
        if ((p >= 0.5 ? 1 : 0) === label) hits++;
      });
      return {
        trainAccuracy: labels.length === 0 ? 0 : hits / labels.length,
        positiveShare: labels.length === 0 ? 0 : labels.filter((l) => l === 1).length / labels.length,
      };
    },
  };
}

/**
 * The ORM objective on `views`, or on the outcomes `subset` of them (a calibration fold's training set).
 * The ORM learns each trajectory twice: as its row, and as its row without the task type. The second view
 * makes the generic evidence (answer on the page, form sent, confirmation notice) carry a verdict by
 * itself, where the first lets type-crossed features explain the label away; that evidence is all the ORM
 * has on a task type it never saw (bench:models, held-out trajectories of unseen templates).
 */
export function prepareOutcomes(views: OutcomeViews, subset?: readonly number[]): PreparedTask {
  const rows = subset ? selectRows(views.rows, subset) : views.rows;
  const blind = subset ? selectRows(views.blind, subset) : views.blind;
  const labels = subset ? subset.map((i) => views.labels[i]!) : views.labels;
  const both = concatBatches([rows, blind], STATE_ROW_WIDTH);
  // The card's metrics are of the rows the ORM reads when it judges.
  const { evaluate } = prepareBinary('orm', rows, labels);
  return { ...prepareBinary('orm', both, [...labels, ...labels]), sourceExamples: labels.length, evaluate, outcomes: views };
}

/** Each outcome's row as the ORM judges it, the same row without the task type, and its label (1 = success). */
export interface OutcomeViews {
  rows: FeatureBatch;
  blind: FeatureBatch;
  labels: number[];
}

function featurizeOutcomeViews(examples: readonly OutcomeExample[]): OutcomeViews {
  const states = examples.map((example) => example.state);
  return {
    rows: featurizeOutcomes(states),
    blind: featurizeOutcomes(states, { withoutTaskType: true }),
    labels: examples.map((example) => (example.success ? 1 : 0)),
  };
}

/** min(v1, v2) of each state, by the critic network (TypeScript forward). */
function minValues(critic: Network, states: readonly ModelState[]): number[] {
  if (states.length === 0) return [];
  const { logits } = forward(critic, featurizeStates(states));
  return states.map((_, i) => Math.min(sigmoid(logits[2 * i]!), sigmoid(logits[2 * i + 1]!)));
}

function prepareWebRL(all: readonly WebRLStepExample[], frozen: FrozenModels, rule: BetaRule): PreparedTask {
  if (!frozen.reference || !frozen.critic) throw new Error('the actor-webrl objective needs a reference actor and a critic');
  if (frozen.critic.shape.outputs !== 2) throw new Error('the critic network must have two heads');
  const reference = frozen.reference;
  const rows = new CandidateRows(all.map((example) => example.state));
  const targets = all.map((example) => candidateIndex(buildCandidates(example.state.intent, example.state.observation), example.response));
  const values = minValues(
    frozen.critic,
    all.map((example) => example.state),
  );
  const nextStates = all.flatMap((example) => (example.nextState ? [example.nextState] : []));
  const nextValues = minValues(frozen.critic, nextStates);
  let next = 0;
  const samples = all.map((example, i) => {
    const nextValue = example.nextState ? nextValues[next++]! : 0;
    const advantage = webrlAdvantage({ value: values[i]!, nextValue, reward: example.reward, mcReturn: example.mcReturn });
    let refLogProb = 0;
    if (targets[i]! >= 0) refLogProb = logSoftmax(forward(reference, rows.get(i)).logits)[targets[i]!]!;
    return { advantage, refLogProb };
  });
  const positives = samples.filter((sample) => sample.advantage > 0).length;
  return {
    kind: 'actor',
    size: all.length,
    skipped: targets.filter((target) => target < 0).length,
    lossAndGradient(network, examples) {
      const { batch, groups } = stackGroups(rows, examples, targets);
      const batchSamples = examples.map((i, j) => ({ group: groups[j]!, ...samples[i]!, tokens: ACTION_TOKENS }));
      return step(network, batch, (logits) => webrlActorLoss(logits, batchSamples, rule));
    },
    evaluate(network) {
      let logRatio = 0;
      let counted = 0;
      all.forEach((_, i) => {
        if (targets[i]! < 0 || !(samples[i]!.advantage > 0)) return;
        logRatio += logSoftmax(forward(network, rows.get(i)).logits)[targets[i]!]! - samples[i]!.refLogProb;
        counted++;
      });
      return { positiveAdvantageShare: all.length === 0 ? 0 : positives / all.length, meanPositiveLogRatio: counted === 0 ? 0 : logRatio / counted };
    },
  };
}

export function prepareTask(data: ObjectiveData, frozen: FrozenModels, rule: BetaRule): PreparedTask {
  switch (data.objective) {
    case 'actor-sft':
      return prepareDemonstrations(data.examples);
    case 'actor-webrl':
      return prepareWebRL(data.examples, frozen, rule);
    case 'critic':
      return prepareBinary(
        'critic',
        featurizeStates(data.examples.map((e) => e.state)),
        data.examples.map((e) => (e.mcReturn > 0 ? 1 : 0)),
      );
    case 'orm':
      return prepareOutcomes(featurizeOutcomeViews(data.examples));
  }
}
