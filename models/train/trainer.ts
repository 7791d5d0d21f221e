/**
 * The training loop, run in-process (tests, small jobs) or inside the worker thread (trainThread.ts).
 *
 * A job names its objective, its data, where the model goes and its hyper-parameters. Batches are drawn
 * in order from seeded permutations of the examples (a new permutation whenever one is used up), so the
 * whole run is a function of the job and its seed. Every `checkpointEvery` steps, and when it stops at
 * `stopAfterStep`, the loop writes a training-state file (weights, Adam moments, step, RNG state, data
 * order); with `resume` a later run continues from it and ends with the same weights as an uninterrupted
 * run. A finished run writes `<outPath>` (.onnx) and its card; re-running a finished job only re-writes
 * them from the final state. An ORM job then calibrates for unseen task types (unseenTypeCalibration.ts):
 * its fold models train from scratch in the same loop, without checkpoints, since the whole
 * calibration takes seconds and a resumed job repeats it to the same result.
 */
import { readFile } from 'node:fs/promises';
import { FEATURIZER_VERSION } from '../featurizer';
import { DEFAULT_HIDDEN, MODEL_SPECS, fileExists, networkShape, saveModel, sha256, type ModelCard } from '../checkpoint';
import { createNetwork, forward, type Network } from '../network';
import { importOnnx } from '../onnxGraph';
import { SeededRng, deriveSeed } from '../../browser/rng';
import { loadExamples, type ExampleSource } from './examples';
import type { Objective } from './trainerContract';
import { WEBRL_BETA, type BetaRule } from './objectives';
import { adamStep, createAdamState, DEFAULT_ADAM, type AdamState } from './optimizer';
import { prepareOutcomes, prepareTask, selectRows, type FrozenModels, type PreparedTask } from './prepare';
import { readTrainingState, writeTrainingState, type TrainingCursor } from './trainingState';
import { CALIBRATION_FITS, calibrateUnseenTypes, type CalibrationOutcome, type FoldFit } from './unseenTypeCalibration';

export interface TrainingJob {
  objective: Objective;
  data: ExampleSource;
  /** What the card records as the training data (storage keys); defaults to the data path. */
  dataRefs?: string[];
  /** What the card records for `init`, `reference` and `critic` (storage keys); default: their paths. */
  modelRefs?: { init?: string; reference?: string; critic?: string };
  /** The finished model's .onnx path; the card goes beside it. */
  outPath: string;
  /** The training-state file; defaults to `<outPath>.state`. */
  statePath?: string;
  /** Continue from `statePath` when it exists (its fingerprint must match this job). */
  resume?: boolean;
  /** An .onnx to start from; actor-webrl starts from `reference` when this is absent. */
  init?: string;
  /** actor-webrl: the previous phase's actor (.onnx). */
  reference?: string;
  /** actor-webrl: the critic (.onnx) giving v and nv. */
  critic?: string;
  seed: number;
  /** Passes over the data (default 1, as WebRL's repository); ignored when `steps` is given. */
  epochs?: number;
  steps?: number;
  batchSize?: number;
  learningRate?: number;
  /** Hidden units of a freshly created network. */
  hidden?: number;
  checkpointEvery?: number;
  /** Stop after this step with a checkpoint written (the job continues with `resume`). */
  stopAfterStep?: number;
  beta?: BetaRule;
}

export interface TrainingProgress {
  /** `calibrating`: an ORM's unseen-type calibration, counting its fold models (unseenTypeCalibration.ts). */
  phase: 'preparing' | 'training' | 'calibrating' | 'saving';
  step: number;
  totalSteps: number;
  /** The last step's loss. */
  loss?: number;
}

export interface TrainingHooks {
  onProgress?(progress: TrainingProgress): void;
  onCheckpoint?(checkpoint: { step: number; path: string }): void;
}

export interface TrainingResult {
  status: 'completed' | 'stopped';
  step: number;
  totalSteps: number;
  statePath: string;
  /** Set when completed. */
  card?: ModelCard;
  metrics: Record<string, number>;
}

const DEFAULTS = { batchSize: 16, epochs: 1, checkpointEvery: 200 } as const;

/**
 * Adam learning rates. The WebRL objective only stops pushing a positive action once its log-ratio
 * reaches 1/beta, so a large step overshoots that bound; it gets a smaller rate (the repository uses
 * 1e-6 on LLMs).
 */
export const DEFAULT_LEARNING_RATES: Record<Objective, number> = { 'actor-sft': 0.01, critic: 0.01, orm: 0.01, 'actor-webrl': 0.002 };
const RECENT_LOSSES = 20;

async function fileDigest(path: string | undefined): Promise<string | null> {
  return path ? sha256(await readFile(path)) : null;
}

function startCursor(size: number, seed: number): TrainingCursor {
  const rng = new SeededRng(deriveSeed(seed, 'order'));
  return { step: 0, order: rng.permutation(size), position: 0, rngState: rng.getState(), recentLosses: [] };
}

/** One Adam step on the next batch of the cursor's data order (a new permutation when one is used up). */
function trainStep(
  task: PreparedTask,
  network: Network,
  adam: AdamState,
  cursor: TrainingCursor,
  rng: SeededRng,
  batchSize: number,
  learningRate: number,
): number {
  const examples: number[] = [];
  while (examples.length < Math.min(batchSize, task.size)) {
    if (cursor.position >= cursor.order.length) {
      cursor.order = rng.permutation(task.size);
      cursor.position = 0;
    }
    examples.push(cursor.order[cursor.position++]!);
  }
  cursor.rngState = rng.getState();
  const { loss, gradient } = task.lossAndGradient(network, examples);
  adamStep(network, adam, gradient, { learningRate, ...DEFAULT_ADAM });
  cursor.step++;
  return loss;
}

async function loadNetwork(path: string, what: string): Promise<Network> {
  try {
    return importOnnx(new Uint8Array(await readFile(path))).network;
  } catch (error) {
    throw new Error(`cannot load the ${what} from ${path}: ${(error as Error).message}`);
  }
}

export async function train(job: TrainingJob, hooks: TrainingHooks = {}): Promise<TrainingResult> {
  const batchSize = job.batchSize ?? DEFAULTS.batchSize;
  const learningRate = job.learningRate ?? DEFAULT_LEARNING_RATES[job.objective];
  const checkpointEvery = job.checkpointEvery ?? DEFAULTS.checkpointEvery;
  const rule = job.beta ?? WEBRL_BETA;
  const statePath = job.statePath ?? `${job.outPath}.state`;
  const initPath = job.init ?? (job.objective === 'actor-webrl' ? job.reference : undefined);
  hooks.onProgress?.({ phase: 'preparing', step: 0, totalSteps: 0 });

  const { data, digest } = await loadExamples(job.objective, job.data);
  const frozen: FrozenModels = {};
  if (job.objective === 'actor-webrl') {
    if (!job.reference || !job.critic) throw new Error('an actor-webrl job needs `reference` and `critic` checkpoints');
    frozen.reference = await loadNetwork(job.reference, 'reference actor');
    frozen.critic = await loadNetwork(job.critic, 'critic');
  }
  const task = prepareTask(data, frozen, rule);
  if (task.size === 0) throw new Error(`no usable ${job.objective} examples (${task.skipped} skipped: action not among the candidates)`);
  const totalSteps = job.steps ?? Math.ceil(((job.epochs ?? DEFAULTS.epochs) * task.size) / batchSize);

  const hidden = job.hidden ?? DEFAULT_HIDDEN;
  const fingerprint = sha256(
    Buffer.from(
      JSON.stringify({
        featurizer: FEATURIZER_VERSION,
        objective: job.objective,
        data: digest,
        init: await fileDigest(initPath),
        reference: await fileDigest(job.reference),
        critic: await fileDigest(job.critic),
        seed: job.seed,
        totalSteps,
        batchSize,
        learningRate,
        hidden,
        rule,
      }),
    ),
  );

  let network: Network;
  let adam: AdamState;
  let cursor: TrainingCursor;
  if (job.resume && (await fileExists(statePath))) {
    const snapshot = await readTrainingState(statePath);
    if (snapshot.fingerprint !== fingerprint) throw new Error(`${statePath} belongs to a different job (data, checkpoints or hyper-parameters changed)`);
    ({ network, adam, cursor } = snapshot);
  } else {
    network = initPath ? await loadNetwork(initPath, 'initial model') : createNetwork(networkShape(task.kind, hidden), deriveSeed(job.seed, 'init'));
    if (network.shape.outputs !== MODEL_SPECS[task.kind].outputs)
      throw new Error(`the initial model does not have a ${task.kind}'s ${MODEL_SPECS[task.kind].outputs} output(s)`);
    adam = createAdamState(network);
    cursor = startCursor(task.size, job.seed);
  }

  const checkpoint = async () => {
    await writeTrainingState(statePath, { fingerprint, cursor, network, adam });
    hooks.onCheckpoint?.({ step: cursor.step, path: statePath });
  };
  const stopAt = Math.min(totalSteps, job.stopAfterStep ?? totalSteps);
  const rng = SeededRng.fromState(cursor.rngState);
  while (cursor.step < stopAt) {
    const loss = trainStep(task, network, adam, cursor, rng, batchSize, learningRate);
    cursor.recentLosses = [...cursor.recentLosses, loss].slice(-RECENT_LOSSES);
    hooks.onProgress?.({ phase: 'training', step: cursor.step, totalSteps, loss });
    if (cursor.step % checkpointEvery === 0 || cursor.step === stopAt) await checkpoint();
  }

  const recentLoss = cursor.recentLosses.reduce((a, b) => a + b, 0) / Math.max(1, cursor.recentLosses.length);
  if (cursor.step < totalSteps) return { status: 'stopped', step: cursor.step, totalSteps, statePath, metrics: { recentLoss } };

  let calibrated: CalibrationOutcome | undefined;
  if (data.objective === 'orm' && task.outcomes) {
    // The fold models train as this one did: same hyper-parameters, the same number of epochs, the same rows.
    const views = task.outcomes;
    let fits = 0;
    const fitFold: FoldFit = (training, judged, seed) => {
      const foldTask = prepareOutcomes(views, training);
      const foldNetwork = createNetwork(networkShape('orm', network.shape.hidden), deriveSeed(seed, 'init'));
      const foldAdam = createAdamState(foldNetwork);
      const foldCursor = startCursor(foldTask.size, seed);
      const foldRng = SeededRng.fromState(foldCursor.rngState);
      const steps = Math.max(1, Math.round((totalSteps * foldTask.size) / task.size));
      while (foldCursor.step < steps) trainStep(foldTask, foldNetwork, foldAdam, foldCursor, foldRng, batchSize, learningRate);
      hooks.onProgress?.({ phase: 'calibrating', step: ++fits, totalSteps: CALIBRATION_FITS });
      return Array.from(forward(foldNetwork, selectRows(views.rows, judged)).logits);
    };
    calibrated = calibrateUnseenTypes(data.examples, job.seed, fitFold);
  }

  hooks.onProgress?.({ phase: 'saving', step: cursor.step, totalSteps });
  const metrics = { recentLoss, ...task.evaluate(network), ...calibrated?.metrics, examples: task.sourceExamples ?? task.size, skippedExamples: task.skipped };
  const card = await saveModel(job.outPath, network, {
    kind: task.kind,
    seed: job.seed,
    training: {
      data: job.dataRefs ?? ('path' in job.data ? [job.data.path] : []),
      objective: job.objective,
      steps: totalSteps,
      examples: metrics.examples,
      hyperparameters: { batchSize, learningRate, hidden: network.shape.hidden, betaLow: rule.low, betaHigh: rule.high, ...DEFAULT_ADAM },
      ...(initPath ? { initialisedFrom: (job.init ? job.modelRefs?.init : job.modelRefs?.reference) ?? initPath } : {}),
      ...(job.reference ? { reference: job.modelRefs?.reference ?? job.reference } : {}),
      ...(job.critic ? { critic: job.modelRefs?.critic ?? job.critic } : {}),
    },
    metrics,
    ...(calibrated ? { calibration: calibrated.calibration } : {}),
  });
  return { status: 'completed', step: cursor.step, totalSteps, statePath, card, metrics };
}
