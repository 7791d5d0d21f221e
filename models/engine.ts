/**
 * Where a model's forward pass runs: onnxruntime-node on the exported graph (what rollouts and filters
 * use, batched), or the TypeScript network (what the trainer uses). Both return the head's output as
 * `[rows, outputs]`; the round-trip tests hold them within 1e-5 of each other.
 */
import * as ort from 'onnxruntime-node';
import type { FeatureBatch } from './featurizer';
import { forward, type Network } from './network';
import { INPUT_INDICES, INPUT_VALUES, type OutputHead } from './onnxGraph';

export interface ScoringEngine {
  readonly kind: 'onnx' | 'memory';
  readonly outputs: number;
  /** The head's output `[rows, outputs]`: logits, or probabilities for a sigmoid head. */
  run(batch: FeatureBatch): Promise<Float64Array>;
}

/** Rows per onnxruntime call: big enough to amortise the call, small enough to bound the int64 copy. */
const MAX_ROWS_PER_RUN = 8192;

export const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

export function memoryEngine(network: Network, head: OutputHead): ScoringEngine {
  return {
    kind: 'memory',
    outputs: network.shape.outputs,
    async run(batch) {
      const { logits } = forward(network, batch);
      if (head === 'sigmoid') for (let i = 0; i < logits.length; i++) logits[i] = sigmoid(logits[i]!);
      return logits;
    },
  };
}

/** `threads` defaults to 1: rollouts run many models side by side and each should take one core. */
export async function onnxEngine(bytes: Uint8Array, outputName: string, outputs: number, threads = 1): Promise<ScoringEngine> {
  const session = await ort.InferenceSession.create(bytes, { intraOpNumThreads: threads, interOpNumThreads: 1 });
  for (const name of [INPUT_INDICES, INPUT_VALUES]) {
    if (!session.inputNames.includes(name)) throw new Error(`the ONNX model has no input named ${name} (it has ${session.inputNames.join(', ')})`);
  }
  if (!session.outputNames.includes(outputName)) {
    throw new Error(`the ONNX model has no output named ${outputName} (it has ${session.outputNames.join(', ')})`);
  }
  return {
    kind: 'onnx',
    outputs,
    async run(batch) {
      const result = new Float64Array(batch.rows * outputs);
      for (let start = 0; start < batch.rows; start += MAX_ROWS_PER_RUN) {
        const rows = Math.min(MAX_ROWS_PER_RUN, batch.rows - start);
        const from = start * batch.width;
        const to = from + rows * batch.width;
        const indices = new BigInt64Array(rows * batch.width);
        for (let i = from; i < to; i++) indices[i - from] = BigInt(batch.indices[i]!);
        const feeds = {
          [INPUT_INDICES]: new ort.Tensor('int64', indices, [rows, batch.width]),
          [INPUT_VALUES]: new ort.Tensor('float32', batch.values.subarray(from, to), [rows, batch.width]),
        };
        const output = (await session.run(feeds))[outputName];
        if (!output || output.data.length !== rows * outputs) {
          throw new Error(`the ONNX model returned ${output?.data.length ?? 0} values for ${rows} rows x ${outputs} outputs`);
        }
        result.set(output.data as Float32Array, start * outputs);
      }
      return result;
    },
  };
}
