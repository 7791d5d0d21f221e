/**
 * The model roles the campaign's activities call, as interfaces: which backend stands behind each
 * (embedded ONNX, a completions server, a chat endpoint, an HTTP critic, an external trainer) is
 * decided once, by the registry (models/backends/registry.ts), and the activity factories receive the result.
 * Tests inject their own roles the same way.
 */
import type { PromptBuilder } from '../../browser/policies/promptBudget';
import type { Policy } from '../../browser/policies/policy';
import type { CompletionsActorSettings } from './completions/settings';
import type { EnvironmentTask } from '../../env/backends/contract';
import type { ActionLogProb, ScoredAction } from '../actor';
import type { CriticValues } from '../critic';
import type { OrmVerdict } from '../orm';
import type { FeasibilityResult } from '../remote/feasibility';
import type { GenerationFailure } from '../remote/taskGeneration';
import type { ModelState } from '../state';
import type { Objective } from '../train/trainerContract';
import type { PromptFormatName } from '../../browser/policies/promptFormatNames';
import type { ObjectiveTraining } from '../remote/trainerEnvironment';
import type { TrainerMetrics } from '../train/trainerMetrics';
import type { ObjectInfo } from '../../storage/artifactStore';
import type { DatasetRef, PhaseScope } from '../../storage/keys';

/** One item a remote model could not answer usefully; stored beside the activity's output. */
export interface BackendFailure {
  /** What was asked about (a trajectory key, a task id, a replay row). */
  item: string;
  reason: string;
}

/** Items a role answers one by one: a state (and an action) with the id failures are recorded under. */
export type StateItem = { id: string; state: ModelState };

export interface ActorRole {
  /** A fresh policy per episode acting with the checkpoint (temperature 0: greedy). */
  policies(checkpoint: string, sampling: { temperature: number; seed: number }): Promise<() => Policy>;
  /** Log-probs of each (state, response) under the checkpoint; an item that cannot be scored is null and recorded. */
  logProbs(checkpoint: string, items: readonly (ScoredAction & { id: string })[]): Promise<{ logProbs: (ActionLogProb | null)[]; failures: BackendFailure[] }>;
  /**
   * An actor served as text: how its prompts are written (rollouts, scoring, records and the critic
   * share it). Such an actor learns from training records (the exact prompt and response text, with
   * this phase's log-probs), written beside the experience.
   */
  readonly prompts?: PromptBuilder;
  /** An actor served as text: where phase 0 starts from (its SFT data file, init checkpoint, whether oracle runs join). */
  readonly phaseZero?: CompletionsActorSettings;
  /** An actor served as text: how its training records' prompts were written, and a configured context (the trainer's max length too). */
  readonly recordFormat?: { promptFormat: PromptFormatName; maxLength?: number };
}

export interface CriticRole {
  /** False without a critic (backend none): the critic filter then keeps the first candidates unjudged. */
  readonly valuesTasks: boolean;
  /** Values of each state under the checkpoint; a state the backend could not value is null and recorded. */
  values(checkpoint: string, items: readonly StateItem[]): Promise<{ values: (CriticValues | null)[]; failures: BackendFailure[] }>;
  /** Whether the campaign trains this critic (an embedded checkpoint); a remote one is kept as it is. */
  readonly trainedByCampaign: boolean;
}

export interface OrmRole {
  /** A verdict on each final state under the checkpoint; a state without a usable verdict is null and recorded. */
  judge(checkpoint: string, items: readonly StateItem[]): Promise<{ verdicts: (OrmVerdict | null)[]; failures: BackendFailure[] }>;
  /** Whether the campaign trains this ORM (an embedded checkpoint); a remote one is kept as it is. */
  readonly trainedByCampaign: boolean;
}

/** What a task generator is asked for: new tasks seeded by the failed ones, none of the known intents. */
export interface GenerationRequest {
  failed: EnvironmentTask[];
  known: Set<string>;
  count: number;
  firstTaskId: number;
  seed: number;
  label: string;
}

/** A model that writes new tasks (in-breadth evolution); without one, the environment evolves its own. */
export interface TaskGenerator {
  /** Recorded beside the generated tasks. */
  readonly model: string;
  /** Whether the environment's own evolution, then the train split, may fill what the model left short. */
  readonly fillWithEmbedded: boolean;
  generate(request: GenerationRequest): Promise<{ tasks: EnvironmentTask[]; duplicates: string[]; failures: GenerationFailure[] }>;
}

/** A model that drops tasks it judges infeasible after the critic filter. */
export interface FeasibilityJudge {
  readonly model: string;
  judge(tasks: EnvironmentTask[]): Promise<FeasibilityResult<EnvironmentTask>>;
}

/** What was served for a checkpoint, stored beside it (`<checkpoint>.served.json`). */
export interface ServedModelRecord {
  name: string;
  role: 'actor';
  checkpoint: string;
  backend: 'vllm-lora' | 'command';
  /** The adapter path as the server sees it (vllm-lora). */
  adapterPath?: string;
}

/** Serves each phase's trained actor under its own name (activities/campaign/deployActivities.ts). */
export interface ActorServing {
  /** Makes the checkpoint answer to `planned.name`; the record to store beside it. */
  deploy(planned: Pick<ServedModelRecord, 'name' | 'role' | 'checkpoint'>, scope: PhaseScope): Promise<ServedModelRecord>;
  /** The name to ask for, made ready again where the server may have lost it (a restarted vLLM). */
  ready(record: ServedModelRecord): Promise<string>;
  /** The highest LoRA rank the server loads, when it loads adapters at run time (the trainer refuses more before training). */
  readonly maxLoraRank?: number;
}

/** One model to train: its data, objective and the checkpoints it starts from. */
export interface TrainSpec {
  scope: PhaseScope;
  name: 'actor' | 'critic' | 'orm';
  /** The checkpoint's file name in the phase (default: `name`), when a phase trains a model twice. */
  file?: string;
  objective: Objective;
  data: DatasetRef;
  epochs: number;
  init?: string;
  reference?: string;
  critic?: string;
}

/** The campaign's training settings a trainer reads (config/schema.ts's TrainingSchema). */
export interface TrainingSettings extends ObjectiveTraining {
  batchSize: number;
  checkpointEvery: number;
}

/** Where a training job writes (its checkpoint and its resumable state) and the campaign's training settings. */
export interface TrainingTarget {
  key: string;
  stateKey: string;
  training: TrainingSettings;
}

export interface Trainer {
  /** Trains one model into `target.key`, resuming from a stored state; the stored checkpoint's objects, step count and what the job did (null: not told). */
  train(spec: TrainSpec, target: TrainingTarget): Promise<{ steps: number; objects: ObjectInfo[]; metrics: TrainerMetrics | null }>;
}

export interface ModelRoles {
  actor: ActorRole;
  critic: CriticRole;
  orm: OrmRole;
  trainer: Trainer;
  /** Undefined: the environment's own evolution writes the curriculum's tasks. */
  taskGenerator: TaskGenerator | undefined;
  /** Undefined: no feasibility check after the critic filter. */
  feasibility: FeasibilityJudge | undefined;
  /** Undefined: trained actors are not served (the embedded actor, or a fixed served model). */
  serving: ActorServing | undefined;
}
