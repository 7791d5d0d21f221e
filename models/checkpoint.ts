/**
 * A model checkpoint: `<name>.onnx` (graph and weights) plus `<name>.json` (the card). The card names the
 * featurizer version and shapes the weights were trained under, the training data references, metrics
 * and seed; loading refuses a card whose featurizer version differs from this code's, or an .onnx whose
 * sha256 differs from the card's.
 */
import { createHash } from 'node:crypto';
import { readFile, rename, stat, writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { memoryEngine, onnxEngine, type ScoringEngine } from './engine';
import { ACTOR_ROW_WIDTH, FEATURE_DIM, FEATURIZER_VERSION, STATE_ROW_WIDTH, featurizerSpec } from './featurizer';
import type { Network, NetworkShape } from './network';
import { exportOnnx, importOnnx, ONNX_OPSET, type OutputHead } from './onnxGraph';

export type ModelKind = 'actor' | 'critic' | 'orm';

/** Whether a file (a card, a training state) is there to read. */
export async function fileExists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** What each model kind is: input width, outputs and head. */
export const MODEL_SPECS: Record<ModelKind, { width: number; outputs: number; head: OutputHead; outputName: string }> = {
  actor: { width: ACTOR_ROW_WIDTH, outputs: 1, head: 'identity', outputName: 'scores' },
  critic: { width: STATE_ROW_WIDTH, outputs: 2, head: 'sigmoid', outputName: 'critic_values' },
  orm: { width: STATE_ROW_WIDTH, outputs: 1, head: 'sigmoid', outputName: 'p_yes' },
};

export const DEFAULT_HIDDEN = 16;

export function networkShape(kind: ModelKind, hidden = DEFAULT_HIDDEN): NetworkShape {
  return { dim: FEATURE_DIM, hidden, outputs: MODEL_SPECS[kind].outputs };
}

const cardSchema = z.object({
  schema: z.literal('webrl.model-card/1'),
  kind: z.enum(['actor', 'critic', 'orm']),
  featurizer: z.object({ version: z.string(), dim: z.number().int(), width: z.number().int() }),
  network: z.object({ dim: z.number().int(), hidden: z.number().int(), outputs: z.number().int() }),
  onnx: z.object({
    sha256: z.string(),
    opset: z.number().int(),
    inputs: z.array(z.object({ name: z.string(), type: z.string(), shape: z.array(z.union([z.string(), z.number()])) })),
    output: z.object({ name: z.string(), type: z.string(), shape: z.array(z.union([z.string(), z.number()])) }),
  }),
  seed: z.number().int(),
  training: z.object({
    /** Storage keys or paths of the data the weights were trained on. */
    data: z.array(z.string()),
    objective: z.string(),
    steps: z.number().int(),
    examples: z.number().int(),
    hyperparameters: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])),
    initialisedFrom: z.string().optional(),
    reference: z.string().optional(),
    critic: z.string().optional(),
  }),
  metrics: z.record(z.string(), z.number()),
  /** ORM only: the correction for task types it never trained on (models/train/unseenTypeCalibration.ts). */
  calibration: z.object({ knownTaskTypes: z.array(z.string()), unseenTypeLogitOffset: z.number() }).optional(),
});

export type ModelCard = z.infer<typeof cardSchema>;
export type CardInput = Pick<ModelCard, 'kind' | 'seed' | 'training' | 'metrics' | 'calibration'>;

export interface EncodedModel {
  onnx: Uint8Array;
  card: ModelCard;
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function encodeModel(network: Network, input: CardInput): EncodedModel {
  const spec = MODEL_SPECS[input.kind];
  if (network.shape.outputs !== spec.outputs) throw new Error(`a ${input.kind} network has ${spec.outputs} outputs, this one ${network.shape.outputs}`);
  const onnx = exportOnnx(
    network,
    { head: spec.head, outputName: spec.outputName, metadata: { kind: input.kind, featurizer: FEATURIZER_VERSION } },
    spec.width,
  );
  const card: ModelCard = {
    schema: 'webrl.model-card/1',
    kind: input.kind,
    featurizer: featurizerSpec(spec.width),
    network: { ...network.shape },
    onnx: {
      sha256: sha256(onnx),
      opset: ONNX_OPSET,
      inputs: [
        { name: 'indices', type: 'int64', shape: ['n', spec.width] },
        { name: 'values', type: 'float32', shape: ['n', spec.width] },
      ],
      output: { name: spec.outputName, type: 'float32', shape: ['n', spec.outputs] },
    },
    seed: input.seed,
    training: input.training,
    metrics: input.metrics,
    ...(input.calibration ? { calibration: input.calibration } : {}),
  };
  return { onnx, card };
}

/** A model ready to score: the network (for training and the memory engine), an engine, and its card when loaded. */
export interface ModelHandle {
  network: Network;
  engine: ScoringEngine;
  card?: ModelCard;
}

export interface LoadedModel extends ModelHandle {
  card: ModelCard;
}

export function parseCard(json: unknown, expectedKind?: ModelKind): ModelCard {
  const parsed = cardSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`invalid model card: ${issue?.path.join('.') || '(card)'}: ${issue?.message ?? 'invalid'}`);
  }
  const card = parsed.data;
  if (expectedKind && card.kind !== expectedKind) throw new Error(`expected a ${expectedKind} checkpoint, got a ${card.kind}`);
  if (card.featurizer.version !== FEATURIZER_VERSION) {
    throw new Error(`the checkpoint was trained with featurizer ${card.featurizer.version}; this code has ${FEATURIZER_VERSION}`);
  }
  return card;
}

/** Restores a checkpoint from its bytes; `engine` picks onnxruntime (default) or the TypeScript network. */
export async function decodeModel(onnx: Uint8Array, card: ModelCard, engine: 'onnx' | 'memory' = 'onnx'): Promise<LoadedModel> {
  if (sha256(onnx) !== card.onnx.sha256) throw new Error(`the .onnx bytes do not match the card's sha256 (${card.onnx.sha256.slice(0, 12)}...)`);
  const imported = importOnnx(onnx);
  const spec = MODEL_SPECS[card.kind];
  if (imported.network.shape.outputs !== spec.outputs || imported.network.shape.dim !== card.network.dim) {
    throw new Error(`the graph's shape ${JSON.stringify(imported.network.shape)} does not match the card's ${JSON.stringify(card.network)}`);
  }
  const scoring = engine === 'onnx' ? await onnxEngine(onnx, spec.outputName, spec.outputs) : memoryEngine(imported.network, spec.head);
  return { card, network: imported.network, engine: scoring };
}

/** The card path beside an .onnx path. */
export function cardPath(onnxPath: string): string {
  return onnxPath.replace(/\.onnx$/, '') + '.json';
}

/** Writes a file whole or not at all (through `<path>.partial`), creating its folder. */
export async function writeAtomically(path: string, data: Uint8Array | string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.partial`;
  await writeFile(temporary, data);
  await rename(temporary, path);
}

/** Writes `<path>` (.onnx) and its card beside it; returns the card. */
export async function saveModel(onnxPath: string, network: Network, input: CardInput): Promise<ModelCard> {
  const { onnx, card } = encodeModel(network, input);
  await writeAtomically(onnxPath, onnx);
  await writeAtomically(cardPath(onnxPath), `${JSON.stringify(card, null, 2)}\n`);
  return card;
}

export async function loadModel(onnxPath: string, options: { kind?: ModelKind; engine?: 'onnx' | 'memory' } = {}): Promise<LoadedModel> {
  const card = parseCard(JSON.parse(await readFile(cardPath(onnxPath), 'utf8')), options.kind);
  return decodeModel(new Uint8Array(await readFile(onnxPath)), card, options.engine);
}

/** A network scored by the TypeScript engine (the trainer's view, and what round-trip tests compare against). */
export function inMemoryModel(network: Network, kind: ModelKind): ModelHandle {
  return { network, engine: memoryEngine(network, MODEL_SPECS[kind].head) };
}
