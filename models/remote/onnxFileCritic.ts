/**
 * A critic from a user-supplied ONNX file. The file must take this project's state rows (featurizer.ts:
 * `indices` int64 [n, STATE_ROW_WIDTH] and `values` float32 [n, STATE_ROW_WIDTH]) and output success
 * probabilities [n, 2] (two heads) or [n, 1] (one head, used for both). It is checked when loaded: the
 * inputs by name and width, a featurizer version in its metadata or in a card beside it (when present)
 * against this code's, and every output value must be a probability.
 */
import { readFile } from 'node:fs/promises';
import onnxProto from 'onnx-proto';
import * as ort from 'onnxruntime-node';
import { cardPath, fileExists, parseCard } from '../checkpoint';
import { criticValues, type StateValueFunction } from '../critic';
import { FEATURIZER_VERSION, STATE_ROW_WIDTH, featurizeStates } from '../featurizer';
import { INPUT_INDICES, INPUT_VALUES } from '../onnxGraph';

const { onnx } = onnxProto;

function checkGraph(bytes: Uint8Array, path: string): void {
  const model = onnx.ModelProto.decode(bytes);
  const version = (model.metadataProps ?? []).find((entry) => entry.key === 'featurizer')?.value;
  if (version && version !== FEATURIZER_VERSION) throw new Error(`${path} was built for featurizer ${version}; this code has ${FEATURIZER_VERSION}`);
  for (const name of [INPUT_INDICES, INPUT_VALUES]) {
    const input = model.graph?.input?.find((value) => value.name === name);
    if (!input) throw new Error(`${path} has no input named ${name}`);
    const width = input.type?.tensorType?.shape?.dim?.[1]?.dimValue;
    if (width !== undefined && width !== null && Number(width) !== 0 && Number(width) !== STATE_ROW_WIDTH) {
      throw new Error(`${path}: input ${name} is ${String(width)} wide; state rows are ${STATE_ROW_WIDTH} wide`);
    }
  }
}

export async function loadOnnxFileCritic(path: string, threads = 1): Promise<StateValueFunction> {
  const bytes = new Uint8Array(await readFile(path));
  checkGraph(bytes, path);
  if (await fileExists(cardPath(path))) parseCard(JSON.parse(await readFile(cardPath(path), 'utf8')), 'critic');
  const session = await ort.InferenceSession.create(bytes, { intraOpNumThreads: threads, interOpNumThreads: 1 });
  const outputName = session.outputNames[0];
  if (!outputName) throw new Error(`${path} declares no output`);
  return {
    async values(states) {
      if (states.length === 0) return [];
      const batch = featurizeStates(states);
      const indices = BigInt64Array.from(batch.indices, (index) => BigInt(index));
      const result = await session.run({
        [INPUT_INDICES]: new ort.Tensor('int64', indices, [batch.rows, batch.width]),
        [INPUT_VALUES]: new ort.Tensor('float32', batch.values, [batch.rows, batch.width]),
      });
      const output = result[outputName]!;
      const heads = output.data.length / states.length;
      if (heads !== 1 && heads !== 2) throw new Error(`${path} returned ${output.data.length} values for ${states.length} states; expected 1 or 2 per state`);
      const data = output.data as Float32Array;
      for (const value of data) {
        if (!(value >= 0 && value <= 1)) throw new Error(`${path} returned ${value}, not a probability; the critic's output must end in a sigmoid`);
      }
      return states.map((_, i) => (heads === 2 ? criticValues(data[2 * i]!, data[2 * i + 1]!) : criticValues(data[i]!, data[i]!)));
    },
  };
}
