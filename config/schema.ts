/**
 * The campaign configuration's own sections: one typed object from a campaign file (YAML or JSON) plus
 * environment variables, with defaults for the embedded one-machine setup. Every object is strict, so a
 * misspelt or unknown field is rejected with its path instead of being silently ignored. Secrets never
 * live here: see `secrets.ts`. The parts own theirs (the store's `s3` in storage/settings.ts, each
 * environment backend's in env/backends/<name>/settings.ts); campaignConfig.ts composes the whole
 * config and its type, `Config`.
 */
import { z } from 'zod';
import { WEBARENA_PORTS } from '../env/siteUrls';
import { port } from './fields';

const hostPort = z.string().regex(/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/, 'expected host:port, e.g. 127.0.0.1:7233');

const name = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'expected lower-case letters, digits and dashes (at most 63, starting with a letter or digit)');

export const TemporalConfigSchema = z.strictObject({
  /** Omit to use the local stack's dev server (stack.ip:stack.temporalPort). */
  address: hostPort.optional(),
  namespace: z.string().min(1).max(255).default('webrl'),
  /** TLS to the frontend; client cert and key come from the environment (they are secrets). */
  tls: z
    .strictObject({
      enabled: z.boolean().default(false),
      serverNameOverride: z.string().min(1).optional(),
      serverRootCaFile: z.string().min(1).optional(),
    })
    .default({ enabled: false }),
  taskQueues: z
    .strictObject({
      control: z.string().min(1).default('webrl-control'),
      browser: z.string().min(1).default('webrl-browser'),
      train: z.string().min(1).default('webrl-train'),
    })
    .default({ control: 'webrl-control', browser: 'webrl-browser', train: 'webrl-train' }),
  /**
   * How long a browser or train activity may go without a heartbeat before Temporal counts its attempt
   * as lost and retries it. Activities beat every few seconds from a timer, so this bounds how long a
   * dead worker goes unnoticed; a heavily loaded machine may want more.
   */
  heartbeatTimeoutSeconds: z.number().int().min(2).max(3600).default(30),
});

export const StackConfigSchema = z.strictObject({
  /** Where the local stack keeps its state (SQLite, MinIO data, logs, pid files); git-ignored. */
  dataDir: z.string().min(1).default('.webrl'),
  ip: z.ipv4().default('127.0.0.1'),
  temporalPort: port.default(7233),
  temporalUiPort: port.default(8233),
  minioPort: port.default(9000),
  minioConsolePort: port.default(9001),
  /**
   * A language model this machine serves for the campaign (a laptop's LLM path): the main job provisions
   * vLLM's CPU build, the trainer's Python environment and the model under the data dir, and serves the
   * model on 127.0.0.1:`port` as models.actor.model, with runtime LoRA, while it runs. Unset: none.
   */
  llm: z
    .strictObject({
      model: z.enum(['SmolLM2-135M-Instruct']),
      port: port.default(8000),
      maxLoraRank: z.number().int().min(1).max(256).default(16),
      maxModelLen: z.number().int().min(256).max(131_072).default(8192),
      /** Also serve the campaign's critic (models.critic.backend: served) with webrl-torch serve-critic on this port. */
      criticPort: port.optional(),
    })
    .optional(),
});

export const ConcurrencySchema = z.strictObject({
  /** Browser contexts per browser worker; 0 means one per CPU core. */
  browserContexts: z.number().int().min(0).max(256).default(0),
  /** Activities a worker runs at once, per task queue. */
  maxConcurrentActivities: z.number().int().min(1).max(1000).default(4),
});

const unitInterval = z.number().min(0).max(1);
const band = (low: number, high: number) =>
  z
    .tuple([unitInterval, unitInterval])
    .default([low, high])
    .refine(([a, b]) => a < b, { message: 'expected [low, high] with low < high' });

/** Settings the campaign workflow acts on each phase; an operator may change them between phases. */
export const PhaseSettingsSchema = z.strictObject({
  tasksPerPhase: z.number().int().min(1).max(5000).default(120),
  /** Candidates generated per task rolled out: the critic filter keeps at most tasksPerPhase of them. */
  candidateFactor: z.number().int().min(1).max(20).default(4),
  criticBand: band(0.05, 0.75),
  rolloutShardSize: z.number().int().min(1).max(1000).default(16),
  rolloutShardsInFlight: z.number().int().min(1).max(1000).default(4),
  temperature: z.number().min(0).max(5).default(1),
  curriculum: z.boolean().default(true),
  replayRankBand: band(0.5, 0.95),
  replayCap: z.number().min(0).max(100).default(2),
});

/** Passes over the data per job when unset, with the embedded trainer (its small ONNX models). */
export const EMBEDDED_EPOCHS = { sftEpochs: 8, ormEpochs: 8, criticEpochs: 2, actorEpochs: 2 } as const;

const epochs = z.number().int().min(1).max(1000).optional();

/** Passes over the data per training job (unset: the trainer backend's defaults, EMBEDDED_EPOCHS for the embedded one). */
export const TrainingSchema = z.strictObject({
  sftEpochs: epochs,
  ormEpochs: epochs,
  criticEpochs: epochs,
  actorEpochs: epochs,
  batchSize: z.number().int().min(1).max(4096).default(16),
  /** Adam learning rates per objective; unset = the trainer's defaults (webrl-torch's: docs/torch-trainer.md). */
  learningRates: z
    .strictObject({
      'actor-sft': z.number().positive().max(1).optional(),
      'actor-webrl': z.number().positive().max(1).optional(),
      critic: z.number().positive().max(1).optional(),
      orm: z.number().positive().max(1).optional(),
    })
    .default({}),
  /** Steps between durable training checkpoints (uploaded to the store). */
  checkpointEvery: z.number().int().min(1).default(200),
  /** Discount of the Monte-Carlo returns in training records and given to an external trainer (WebRL: 0.9). */
  gamma: z.number().gt(0).max(1).default(0.9),
  /**
   * The replay buffer starts with phase 0's oracle demonstrations (the SFT data), so RL phases replay them
   * beside earlier successes: within the cap, whatever their perplexity (they anchor what SFT taught).
   * Unset: off, and a frozen config stays as it was.
   */
  replayDemonstrations: z.boolean().optional(),
});

/** The campaign's own fields before `environment` (its union is built in campaignConfig.ts) and `training`. */
export const campaignFields = {
  name: name.default('default'),
  seed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(1),
  /** RL phases after SFT (phase 0). */
  phases: z.number().int().min(0).max(1000).default(3),
  phase: PhaseSettingsSchema.default(PhaseSettingsSchema.parse({})),
  /**
   * What rewards a rollout: `orm`, the outcome reward model on every trajectory (WebRL); or
   * `evaluator`, the environment's evaluator where the task has one and the ORM where it has none.
   */
  reward: z.enum(['orm', 'evaluator']).default('orm'),
};

/** Where a browser worker serves the embedded sites (WebArena's ports by default). */
export const SitesSchema = z.strictObject({
  host: z.ipv4().default('127.0.0.1'),
  ports: z
    .strictObject({
      shopping: port.default(WEBARENA_PORTS.shopping),
      shopping_admin: port.default(WEBARENA_PORTS.shopping_admin),
      reddit: port.default(WEBARENA_PORTS.reddit),
      gitlab: port.default(WEBARENA_PORTS.gitlab),
    })
    .default(WEBARENA_PORTS),
});
