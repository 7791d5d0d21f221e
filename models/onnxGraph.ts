/**
 * The network as an ONNX graph (opset 13), written with onnx-proto, and read back. The weights live in
 * the graph's initializers, so the .onnx file alone restores the network.
 *
 *   inputs   indices int64 [n, K], values float32 [n, K]
 *   values3  = Unsqueeze(values, [2])                                      [n, K, 1]
 *   pooled   = ReduceSum(Gather(embedding, indices) * values3, [1])        [n, H]
 *   deep     = MatMul(Tanh(pooled + hiddenBias), outWeight)                [n, O]
 *   wideSum  = ReduceSum(Gather(wide, indices) * values3, [1])             [n, O]
 *   logits   = deep + wideSum + outBias                                    [n, O]
 *   output   = logits (head 'identity') or Sigmoid(logits) (head 'sigmoid')
 */
import onnxProto from 'onnx-proto';
import { PARAMETER_NAMES, parameterDims, type Network, type NetworkShape, type ParameterName } from './network';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

export const ONNX_OPSET = 13;
export const INPUT_INDICES = 'indices';
export const INPUT_VALUES = 'values';

export type OutputHead = 'identity' | 'sigmoid';

export interface GraphSpec {
  head: OutputHead;
  outputName: string;
  /** Written to the model's metadata_props (featurizer version, model kind, ...). */
  metadata: Record<string, string>;
}

function floatTensor(name: string, dims: number[], data: Float32Array) {
  // Copy so the bytes are little-endian float32 starting at offset 0 whatever the source view.
  const bytes = new Uint8Array(data.byteLength);
  new Float32Array(bytes.buffer).set(data);
  return onnx.TensorProto.create({ name, dims, dataType: FLOAT, rawData: bytes });
}

function int64Tensor(name: string, values: number[]) {
  return onnx.TensorProto.create({ name, dims: [values.length], dataType: INT64, int64Data: values });
}

function valueInfo(name: string, elemType: number, dims: (number | string)[]) {
  const dim = dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d }));
  return onnx.ValueInfoProto.create({ name, type: { tensorType: { elemType, shape: { dim } } } });
}

function node(opType: string, input: string[], output: string, ints: Record<string, number> = {}) {
  const attribute = Object.entries(ints).map(([name, i]) => onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.INT, i }));
  return onnx.NodeProto.create({ opType, input, output: [output], name: output, attribute });
}

export function exportOnnx(network: Network, spec: GraphSpec, width: number): Uint8Array {
  const dims = parameterDims(network.shape);
  const { outputs } = network.shape;
  const logits = spec.head === 'identity' ? spec.outputName : 'logits';
  const nodes = [
    node('Unsqueeze', [INPUT_VALUES, 'axis2'], 'values3'),
    node('Gather', ['embedding', INPUT_INDICES], 'embedded', { axis: 0 }),
    node('Mul', ['embedded', 'values3'], 'embeddedWeighted'),
    node('ReduceSum', ['embeddedWeighted', 'axis1'], 'pooled', { keepdims: 0 }),
    node('Add', ['pooled', 'hiddenBias'], 'pre'),
    node('Tanh', ['pre'], 'activations'),
    node('MatMul', ['activations', 'outWeight'], 'deep'),
    node('Gather', ['wide', INPUT_INDICES], 'wideRows', { axis: 0 }),
    node('Mul', ['wideRows', 'values3'], 'wideWeighted'),
    node('ReduceSum', ['wideWeighted', 'axis1'], 'wideSum', { keepdims: 0 }),
    node('Add', ['deep', 'wideSum'], 'deepAndWide'),
    node('Add', ['deepAndWide', 'outBias'], logits),
    ...(spec.head === 'sigmoid' ? [node('Sigmoid', [logits], spec.outputName)] : []),
  ];
  const graph = onnx.GraphProto.create({
    name: spec.metadata.kind ?? 'model',
    node: nodes,
    initializer: [...PARAMETER_NAMES.map((name) => floatTensor(name, dims[name], network.params[name])), int64Tensor('axis1', [1]), int64Tensor('axis2', [2])],
    input: [valueInfo(INPUT_INDICES, INT64, ['n', width]), valueInfo(INPUT_VALUES, FLOAT, ['n', width])],
    output: [valueInfo(spec.outputName, FLOAT, ['n', outputs])],
  });
  const model = onnx.ModelProto.create({
    irVersion: 7,
    opsetImport: [{ domain: '', version: ONNX_OPSET }],
    producerName: 'webrl-temporal/models',
    graph,
    metadataProps: Object.entries(spec.metadata).map(([key, value]) => ({ key, value })),
  });
  return onnx.ModelProto.encode(model).finish();
}

export interface ImportedGraph {
  network: Network;
  metadata: Record<string, string>;
  outputName: string;
  head: OutputHead;
}

function tensorData(tensor: onnxProto.onnx.ITensorProto): Float32Array {
  if (tensor.dataType !== FLOAT) throw new Error(`initializer ${tensor.name} is not float32`);
  if (tensor.rawData && tensor.rawData.length > 0) {
    const copy = new Uint8Array(tensor.rawData);
    return new Float32Array(copy.buffer, 0, copy.byteLength / 4);
  }
  return Float32Array.from(tensor.floatData ?? []);
}

/** Reads a graph written by `exportOnnx` back into a network; anything else is rejected with the reason. */
export function importOnnx(bytes: Uint8Array): ImportedGraph {
  const model = onnx.ModelProto.decode(bytes);
  const graph = model.graph;
  if (!graph) throw new Error('the ONNX model has no graph');
  const byName = new Map((graph.initializer ?? []).map((tensor) => [tensor.name ?? '', tensor]));
  const tensor = (name: ParameterName) => {
    const found = byName.get(name);
    if (!found) throw new Error(`the ONNX graph has no initializer named ${name}`);
    return { dims: (found.dims ?? []).map(Number), data: tensorData(found) };
  };
  const embedding = tensor('embedding');
  const wide = tensor('wide');
  const shape: NetworkShape = { dim: embedding.dims[0] ?? 0, hidden: embedding.dims[1] ?? 0, outputs: wide.dims[1] ?? 0 };
  const expected = parameterDims(shape);
  const params = {} as Network['params'];
  for (const name of PARAMETER_NAMES) {
    const { dims, data } = tensor(name);
    if (dims.join('x') !== expected[name].join('x') || data.length !== dims.reduce((a, b) => a * b, 1)) {
      throw new Error(`initializer ${name} has dims [${dims.join(', ')}], expected [${expected[name].join(', ')}]`);
    }
    params[name] = data;
  }
  const outputName = graph.output?.[0]?.name;
  if (!outputName) throw new Error('the ONNX graph declares no output');
  const head: OutputHead = (graph.node ?? []).some((n) => n.opType === 'Sigmoid' && n.output?.[0] === outputName) ? 'sigmoid' : 'identity';
  const metadata = Object.fromEntries((model.metadataProps ?? []).map((entry) => [entry.key ?? '', entry.value ?? '']));
  return { network: { shape, params }, metadata, outputName, head };
}
