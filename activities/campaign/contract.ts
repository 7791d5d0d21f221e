/**
 * The campaign's activities as the workflow calls them: inputs are a phase scope plus references,
 * outputs are references plus small numbers. Implementations live beside this file, one per module.
 */
import type { CarryOver, ModelRefs, PhaseNumbers, PhaseSummary } from '../../workflows/campaignTypes';
import type { DatasetRef, PhaseScope } from '../../storage/keys';

export interface ShardResult {
  shard: number;
  /** JSONL index of this shard's trajectories (one row per trajectory: task, trace key, outcome). */
  trajectories: DatasetRef;
  infrastructureFailures: number;
}

/** Phase 0's training data: oracle steps (actor), every step with its return (critic), outcomes (ORM). */
export interface Demonstrations {
  demonstrations: DatasetRef;
  criticExamples: DatasetRef;
  ormExamples: DatasetRef;
}

/** What a phase deployed: the served name of its actor and the checkpoint behind it. */
export interface ServedModels {
  actor: { name: string; checkpoint: string };
}

/** The control queue: task sets, evaluation summaries, the phase manifest (cheap, no browser, no GPU). */
export interface ControlActivities {
  /** New tasks: evolved from failed tasks (curriculum) or drawn from the train split. */
  generateTasks(input: PhaseScope & { failedTasks: DatasetRef | null; count: number; curriculum: boolean }): Promise<DatasetRef>;
  /** The held-out test split, as a task dataset for evaluation rollouts. */
  evaluationTasks(scope: PhaseScope): Promise<DatasetRef>;
  /** Success on the test split, overall and per site, from the environment's evaluators. */
  summarizeEvaluation(input: PhaseScope & { shards: DatasetRef[] }): Promise<{ evaluation: string; successRate: number; perSite: Record<string, number> }>;
  /** Writes the phase manifest last; returns the summary the workflow carries. */
  publishPhase(
    input: PhaseScope & {
      carry: CarryOver;
      evaluation: string;
      tasks: DatasetRef;
      rewards: DatasetRef;
      experience: DatasetRef;
      numbers: PhaseNumbers;
    },
  ): Promise<{ manifestKey: string; summary: PhaseSummary }>;
}

/** The browser queue: everything that drives Chromium on the environment's sites. */
export interface BrowserActivities {
  /**
   * `webarena` backend, before a phase (`phase`) and before its evaluation (`evaluation`): the site
   * resets due then, and a health check of every site (one that stays down fails for good, named).
   */
  prepareEnvironment(input: PhaseScope & { moment: 'phase' | 'evaluation' }): Promise<{ reset: string[]; checked: string[] }>;
  /** Phase 0: oracle episodes on the train split (SFT data) and labelled episodes for the ORM. */
  collectDemonstrations(scope: PhaseScope): Promise<Demonstrations>;
  /**
   * Keeps tasks whose critic value at the start state lies in the band (either head qualifies); at
   * most `limit` of them when given: the highest-valued, spread over templates (`mostPromisingTasks`),
   * in candidate order.
   */
  filterTasksByCritic(
    input: PhaseScope & { candidates: DatasetRef; critic: string; band: [number, number]; limit?: number },
  ): Promise<{ tasks: DatasetRef; meanValue: number }>;
  /** Runs the actor on tasks [offset, offset+limit) in the browser; resumes from its own traces. */
  runRolloutShard(
    input: PhaseScope & {
      purpose: 'train' | 'eval' | 'probe';
      tasks: DatasetRef;
      shard: number;
      offset: number;
      limit: number;
      actor: string;
      temperature: number;
    },
  ): Promise<ShardResult>;
}

/** The train queue: rewards, experience, training and serving the trained actor. */
export interface TrainActivities {
  /** After a phase trains the remote-served actor: serve it under the phase's name (models.serving). */
  deployModels(input: PhaseScope & { actor: string }): Promise<{ served: ServedModels | null }>;
  /** Phase 0: behaviour cloning of the actor; critic and ORM trained from the same episodes. */
  trainSft(input: PhaseScope & Demonstrations): Promise<{ models: ModelRefs; steps: number }>;
  /**
   * Phase 0: the ORM and critic retrained with the SFT actor's own probe rollouts added to the SFT
   * data, labelled by the train tasks' evaluators (a remote ORM or critic is kept as it is).
   */
  fitOrmAndCriticToProbe(
    input: PhaseScope & Pick<Demonstrations, 'criticExamples' | 'ormExamples'> & { shards: DatasetRef[]; orm: string; critic: string },
  ): Promise<{ orm: string; critic: string; steps: number; outcomes: number }>;
  /** Rewards every trajectory with the ORM (reward 1 when P(YES) >= 0.5). */
  scoreWithOrm(input: PhaseScope & { shards: DatasetRef[]; orm: string }): Promise<{ rewards: DatasetRef; successes: number }>;
  /** Training set = this phase's steps + perplexity-filtered replay; new replay buffer; failed tasks. */
  filterExperience(
    input: PhaseScope & {
      rewards: DatasetRef;
      /** The tasks rolled out (failed ones seed the next phase's curriculum). */
      tasks: DatasetRef;
      replayBuffer: DatasetRef | null;
      actor: string;
      rankBand: [number, number];
      cap: number;
    },
  ): Promise<{ experience: DatasetRef; replayBuffer: DatasetRef; failedTasks: DatasetRef; replayedSteps: number; currentSteps: number }>;
  trainCritic(input: PhaseScope & { experience: DatasetRef; critic: string }): Promise<{ critic: string; steps: number }>;
  /** The KL-constrained WebRL actor update, the previous actor as reference. */
  trainActor(input: PhaseScope & { experience: DatasetRef; actor: string; critic: string }): Promise<{ actor: string; steps: number }>;
}

/** What each task queue's workers serve: the workflow's proxy for a queue has that queue's activities only. */
export interface QueueActivities {
  control: ControlActivities;
  browser: BrowserActivities;
  train: TrainActivities;
}

export type CampaignActivities = ControlActivities & BrowserActivities & TrainActivities;
