/**
 * Adam with lazy (sparse) updates of the two feature tables: a table row's moments and weights change
 * only on steps whose batch touches it (as TensorFlow's LazyAdam), so a step costs what the batch
 * touches, not the 2^18-row tables. The small dense tensors update every step. Moments are stored as
 * float32 like the weights, so a checkpoint restores them bit for bit.
 */
import { PARAMETER_NAMES, type Gradient, type Network, type ParameterName } from '../network';

export interface AdamSettings {
  learningRate: number;
  beta1: number;
  beta2: number;
  epsilon: number;
}

export const DEFAULT_ADAM: Omit<AdamSettings, 'learningRate'> = { beta1: 0.9, beta2: 0.999, epsilon: 1e-8 };

export interface AdamState {
  step: number;
  first: Record<ParameterName, Float32Array>;
  second: Record<ParameterName, Float32Array>;
}

export function createAdamState(network: Network): AdamState {
  const zeros = () => Object.fromEntries(PARAMETER_NAMES.map((name) => [name, new Float32Array(network.params[name].length)])) as AdamState['first'];
  return { step: 0, first: zeros(), second: zeros() };
}

export function adamStep(network: Network, state: AdamState, gradient: Gradient, settings: AdamSettings): void {
  state.step++;
  const { beta1, beta2, epsilon } = settings;
  const rate = (settings.learningRate * Math.sqrt(1 - beta2 ** state.step)) / (1 - beta1 ** state.step);
  const update = (name: ParameterName, offset: number, grad: Float64Array, from = 0, length = grad.length) => {
    const weights = network.params[name];
    const first = state.first[name];
    const second = state.second[name];
    for (let i = 0; i < length; i++) {
      const g = grad[from + i]!;
      const j = offset + i;
      const m = beta1 * first[j]! + (1 - beta1) * g;
      const v = beta2 * second[j]! + (1 - beta2) * g * g;
      first[j] = m;
      second[j] = v;
      weights[j] = weights[j]! - (rate * m) / (Math.sqrt(v) + epsilon);
    }
  };
  const { hidden, outputs } = network.shape;
  const { tables } = gradient;
  tables.features.forEach((feature, slot) => {
    update('embedding', feature * hidden, tables.embedding, slot * hidden, hidden);
    update('wide', feature * outputs, tables.wide, slot * outputs, outputs);
  });
  update('hiddenBias', 0, gradient.hiddenBias);
  update('outWeight', 0, gradient.outWeight);
  update('outBias', 0, gradient.outBias);
}
