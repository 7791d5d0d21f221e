/**
 * The network behind all three models: a wide-and-deep scorer over sparse hashed features.
 *
 *   pre    = sum_k values[r,k] * embedding[indices[r,k], :] + hiddenBias        (hidden)
 *   logits = tanh(pre) @ outWeight + sum_k values[r,k] * wide[indices[r,k], :] + outBias   (outputs)
 *
 * Weights are stored as float32 (what the ONNX graph holds); the TypeScript forward and backward passes
 * compute in float64. Embedding and wide tables start at zero, so a feature never seen in training adds
 * nothing; outWeight starts random (seeded), which breaks the symmetry between hidden units and between
 * the critic's two heads. Gradients of the two tables are sparse: only the rows a batch touches.
 */
import { SeededRng } from '../browser/rng';
import type { FeatureBatch } from './featurizer';

export interface NetworkShape {
  dim: number;
  hidden: number;
  outputs: number;
}

export const PARAMETER_NAMES = ['embedding', 'wide', 'hiddenBias', 'outWeight', 'outBias'] as const;
export type ParameterName = (typeof PARAMETER_NAMES)[number];

export interface Network {
  shape: NetworkShape;
  params: Record<ParameterName, Float32Array>;
}

/** The dims of each parameter tensor; the first two are tables indexed by feature. */
export function parameterDims(shape: NetworkShape): Record<ParameterName, [number] | [number, number]> {
  return {
    embedding: [shape.dim, shape.hidden],
    wide: [shape.dim, shape.outputs],
    hiddenBias: [shape.hidden],
    outWeight: [shape.hidden, shape.outputs],
    outBias: [shape.outputs],
  };
}

export function createNetwork(shape: NetworkShape, seed: number): Network {
  const rng = new SeededRng(seed);
  const outWeight = new Float32Array(shape.hidden * shape.outputs);
  const scale = 1 / Math.sqrt(shape.hidden);
  for (let i = 0; i < outWeight.length; i++) outWeight[i] = rng.normal() * scale;
  return {
    shape,
    params: {
      embedding: new Float32Array(shape.dim * shape.hidden),
      wide: new Float32Array(shape.dim * shape.outputs),
      hiddenBias: new Float32Array(shape.hidden),
      outWeight,
      outBias: new Float32Array(shape.outputs),
    },
  };
}

export function cloneNetwork(network: Network): Network {
  const params = Object.fromEntries(PARAMETER_NAMES.map((name) => [name, network.params[name].slice()])) as Network['params'];
  return { shape: { ...network.shape }, params };
}

export interface ForwardPass {
  rows: number;
  /** `[rows, outputs]` */
  logits: Float64Array;
  /** `[rows, hidden]`, after tanh; kept for the backward pass. */
  activations: Float64Array;
}

export function forward(network: Network, batch: FeatureBatch): ForwardPass {
  const { hidden: H, outputs: O } = network.shape;
  const { embedding, wide, hiddenBias, outWeight, outBias } = network.params;
  const { rows, width, indices, values } = batch;
  const logits = new Float64Array(rows * O);
  const activations = new Float64Array(rows * H);
  const pre = new Float64Array(H);
  for (let r = 0; r < rows; r++) {
    for (let h = 0; h < H; h++) pre[h] = hiddenBias[h]!;
    const out = r * O;
    for (let o = 0; o < O; o++) logits[out + o] = outBias[o]!;
    for (let k = 0; k < width; k++) {
      const value = values[r * width + k]!;
      if (value === 0) continue;
      const feature = indices[r * width + k]!;
      const e = feature * H;
      for (let h = 0; h < H; h++) pre[h]! += value * embedding[e + h]!;
      const w = feature * O;
      for (let o = 0; o < O; o++) logits[out + o]! += value * wide[w + o]!;
    }
    const act = r * H;
    for (let h = 0; h < H; h++) {
      const a = Math.tanh(pre[h]!);
      activations[act + h] = a;
      for (let o = 0; o < O; o++) logits[out + o]! += a * outWeight[h * O + o]!;
    }
  }
  return { rows, logits, activations };
}

/**
 * The gradient of the two feature tables, kept only for the rows a batch touches. A dense
 * feature -> slot map (one int32 per feature) makes each scatter-add an array lookup.
 */
export class TableGradient {
  /** Touched features in first-touch order; slot i holds features[i]. */
  readonly features: number[] = [];
  /** `[slots, hidden]` */
  embedding: Float64Array;
  /** `[slots, outputs]` */
  wide: Float64Array;
  private readonly slots: Int32Array;

  constructor(private readonly shape: NetworkShape) {
    this.slots = new Int32Array(shape.dim).fill(-1);
    this.embedding = new Float64Array(1024 * shape.hidden);
    this.wide = new Float64Array(1024 * shape.outputs);
  }

  /** The slot of `feature`, created (zeroed) on first touch. */
  slot(feature: number): number {
    const existing = this.slots[feature]!;
    if (existing >= 0) return existing;
    const slot = this.features.length;
    this.features.push(feature);
    this.slots[feature] = slot;
    if ((slot + 1) * this.shape.hidden > this.embedding.length) {
      const grown = new Float64Array(this.embedding.length * 2);
      grown.set(this.embedding);
      this.embedding = grown;
      const wide = new Float64Array(this.wide.length * 2);
      wide.set(this.wide);
      this.wide = wide;
    }
    return slot;
  }
}

/** Gradient of a loss: dense for the small tensors, per touched row for the two tables. */
export interface Gradient {
  tables: TableGradient;
  hiddenBias: Float64Array;
  outWeight: Float64Array;
  outBias: Float64Array;
}

export function emptyGradient(shape: NetworkShape): Gradient {
  return {
    tables: new TableGradient(shape),
    hiddenBias: new Float64Array(shape.hidden),
    outWeight: new Float64Array(shape.hidden * shape.outputs),
    outBias: new Float64Array(shape.outputs),
  };
}

/** Adds d(loss)/d(params) to `gradient`, given d(loss)/d(logits) `[rows, outputs]` for `pass`. */
export function backward(network: Network, batch: FeatureBatch, pass: ForwardPass, dLogits: Float64Array, gradient: Gradient): void {
  const { hidden: H, outputs: O } = network.shape;
  const { outWeight } = network.params;
  const { width, indices, values } = batch;
  const dPre = new Float64Array(H);
  for (let r = 0; r < pass.rows; r++) {
    const out = r * O;
    let any = false;
    for (let o = 0; o < O; o++) if (dLogits[out + o] !== 0) any = true;
    if (!any) continue;
    for (let o = 0; o < O; o++) gradient.outBias[o]! += dLogits[out + o]!;
    const act = r * H;
    for (let h = 0; h < H; h++) {
      const a = pass.activations[act + h]!;
      let dA = 0;
      for (let o = 0; o < O; o++) {
        const d = dLogits[out + o]!;
        gradient.outWeight[h * O + o]! += a * d;
        dA += outWeight[h * O + o]! * d;
      }
      dPre[h] = dA * (1 - a * a);
      gradient.hiddenBias[h]! += dPre[h]!;
    }
    const tables = gradient.tables;
    for (let k = 0; k < width; k++) {
      const value = values[r * width + k]!;
      if (value === 0) continue;
      const slot = tables.slot(indices[r * width + k]!);
      const embedding = tables.embedding;
      const e = slot * H;
      for (let h = 0; h < H; h++) embedding[e + h]! += value * dPre[h]!;
      const wide = tables.wide;
      const w = slot * O;
      for (let o = 0; o < O; o++) wide[w + o]! += value * dLogits[out + o]!;
    }
  }
}
