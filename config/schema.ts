/**
 * The campaign configuration: one typed object from a campaign file (YAML or JSON) plus environment
 * variables, with defaults for the embedded one-machine setup. Every object is strict, so a misspelt
 * or unknown field is rejected with its path instead of being silently ignored. Secrets never live
 * here: see `secrets.ts`.
 */
import { z } from 'zod';
import type { Config } from './campaignConfig';
import { SITE_NAMES, WEBARENA_PORTS, type SiteName } from '../env/siteUrls';

const hostPort = z.string().regex(/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/, 'expected host:port, e.g. 127.0.0.1:7233');

const port = z.number().int().min(1).max(65535);

/**
 * An http(s) URL without `user:password@`: a credential in a URL would be stored in the frozen config
 * and printed back by `config check` and by errors; accounts and keys come from the environment.
 */
export const httpUrl = z.url({ protocol: /^https?$/ }).refine((value) => !/^[a-z]+:\/\/[^/?#]*@/i.test(value), {
  message: 'a URL with credentials (user:password@) is not accepted: give the URL without them and the account through the environment',
});

const name = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'expected lower-case letters, digits and dashes (at most 63, starting with a letter or digit)');

/** S3 bucket naming rules (3-63 chars, lower-case, digits, dots, dashes). */
const bucket = z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected a valid S3 bucket name (3-63 lower-case letters, digits, dots, dashes)');

const prefix = z.string().refine((p) => p === '' || (/^[A-Za-z0-9!_.*'()/-]+$/.test(p) && !p.startsWith('/') && p.endsWith('/')), {
  message: "expected '' or a key prefix without a leading '/' that ends with '/', e.g. 'webrl/'",
});

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

export const S3ConfigSchema = z.strictObject({
  /** Omit to use the local stack's MinIO; for AWS give the regional endpoint (https://s3.<region>.amazonaws.com). */
  endpoint: httpUrl.optional(),
  region: z.string().min(1).default('us-east-1'),
  bucket: bucket.default('webrl'),
  prefix: prefix.default(''),
  forcePathStyle: z.boolean().default(true),
  /** Attempts per request for transient faults (throttling, 5xx, dropped connections). */
  maxAttempts: z.number().int().min(1).max(20).default(6),
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

const siteUrl = httpUrl;
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected the name of an environment variable');
const seconds = (max: number, fallback: number) => z.number().int().min(1).max(max).default(fallback);

/** A task file in WebArena's format: a local path, or a key in the campaign's store. */
const TaskSourceSchema = z.union([z.strictObject({ path: z.string().min(1) }), z.strictObject({ key: z.string().min(1) })]);

/**
 * What restores a site's seeded state: a command (run with /bin/sh), an HTTP request, or the site's
 * WebArena-Verified `env-ctrl` service (its base URL, port 8877 by default: `POST /restart?wait=1`, then `GET /status`).
 */
export const ResetHookSchema = z.union([
  z.strictObject({ command: z.string().min(1), timeoutSeconds: seconds(3600, 600) }),
  z.strictObject({
    http: z.strictObject({ url: siteUrl, method: z.enum(['POST', 'PUT', 'GET']).default('POST'), timeoutSeconds: seconds(3600, 120) }),
  }),
  z.strictObject({ kind: z.literal('env-ctrl'), url: siteUrl, timeoutSeconds: seconds(3600, 600) }),
]);

/** When a site is reset: before each evaluation, every N episodes on it, once at the start of each phase, or never. */
export const ResetPolicySchema = z.union([
  z.enum(['beforeEvaluation', 'oncePerPhase', 'never']),
  z.strictObject({ everyNEpisodes: z.number().int().min(1).max(1_000_000) }),
]);

export const WebArenaSiteSchema = z.strictObject({
  /** The site's URL (what its placeholder resolves to); else WebArena's variable (SHOPPING, REDDIT, ...). */
  url: siteUrl.optional(),
  /** The environment variables holding the account (default WEBRL_<SITE>_USERNAME / WEBRL_<SITE>_PASSWORD). */
  login: z.strictObject({ usernameEnv: envName.optional(), passwordEnv: envName.optional() }).default({}),
  reset: z.strictObject({ hook: ResetHookSchema, policy: ResetPolicySchema }).optional(),
  /** Episodes on this site at once, per browser worker (a real site is shared state); default maxConcurrentEpisodesPerSite. */
  maxConcurrentEpisodes: z.number().int().min(1).max(256).optional(),
});
export type WebArenaSiteSettings = z.infer<typeof WebArenaSiteSchema>;

/** WebArena's (or WebArena-Lite's) sites, or the embedded ones served by `webrl env serve`. */
export const WebArenaSchema = z.strictObject({
  sites: z
    .strictObject(
      Object.fromEntries(SITE_NAMES.map((site) => [site, WebArenaSiteSchema.optional()])) as Record<SiteName, z.ZodOptional<typeof WebArenaSiteSchema>>,
    )
    .default({}),
  /** WebArena's HOMEPAGE (health-checked when given; no task starts there). */
  homepage: siteUrl.optional(),
  tasks: z.strictObject({ train: TaskSourceSchema, test: TaskSourceSchema }),
  /**
   * Whose scoring rules the task files follow (docs/webarena.md): `webarena-lite` (WebArena-Lite's and
   * the exported embedded tasks') or `webarena` (the original benchmark's; its fuzzy_match and ua_match
   * ask `models.judge`, which must then be a chat endpoint), or `webarena-verified` (WebArena-Verified's
   * task files, scored by its official evaluator from the agent's JSON response and the network trace).
   */
  harness: z.enum(['webarena-lite', 'webarena', 'webarena-verified']).default('webarena-lite'),
  maxConcurrentEpisodesPerSite: z.number().int().min(1).max(256).default(4),
  /** A signed-in state is checked again (one HTTP request) by the first episode after this many seconds; 0 = every episode. */
  sessionCheckSeconds: z.number().min(0).max(86_400).default(60),
  /** Before each phase and when a shard's episodes fail: every site must answer, within this many tries. */
  healthCheck: z
    .strictObject({
      attempts: z.number().int().min(1).max(100).default(3),
      intervalSeconds: z.number().min(0).max(600).default(5),
      timeoutSeconds: seconds(600, 15),
    })
    .default({ attempts: 3, intervalSeconds: 5, timeoutSeconds: 15 }),
});
export type WebArenaConfig = z.infer<typeof WebArenaSchema>;

/**
 * The fields every environment backend's settings share (after its own `backend` and section): each
 * backend's member of `campaign.environment` is `{ backend, <its section>, ...environmentFields }`
 * (env/backends/<name>/settings.ts), so the resolved config keeps one field order.
 */
export const environmentFields = {
  /** Seed of the sites' data and of the task splits generated from it. */
  worldSeed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(2411),
  /** Evaluate on a seeded sample of this many test tasks; 0 = the whole test split. */
  testTasks: z.number().int().min(0).default(0),
  /** SFT demonstrations from a seeded sample of this many train tasks; 0 = the whole train split. */
  demonstrationTasks: z.number().int().min(0).default(200),
  /** Steps per episode before it ends (WebRL: 30). */
  maxSteps: z.number().int().min(1).max(100).default(30),
  /** Wall-clock budget per episode. */
  episodeDeadlineSeconds: z.number().int().min(5).max(3600).default(300),
  /**
   * Share of episodes whose steps are stored as screenshots (for the HTML report), picked by a hash of
   * the episode's storage key, so a retry picks the same ones. Benchmarks set 0.
   */
  screenshotRate: z.number().min(0).max(1).default(0.1),
  /**
   * What the models read and the least wait before each observation (docs/webrl-fidelity.md). Unset
   * `profile`: `webrl` (the reference harness's annotator) with a completions actor, else `default`;
   * unset `minWaitMs`: 500 for `webrl` (the reference's wait), 0 for `default`.
   */
  observation: z
    .strictObject({
      profile: z.enum(['default', 'webrl']).optional(),
      minWaitMs: z.number().int().min(0).max(10_000).optional(),
    })
    .default({}),
};

/** Passes over the data per job when unset, with the embedded trainer (its small ONNX models). */
export const EMBEDDED_EPOCHS = { sftEpochs: 8, ormEpochs: 8, criticEpochs: 2, actorEpochs: 2 } as const;
/** With an external trainer: WebRL's (SFT 1 and ORM 4 in its LLaMA-Factory configs; critic and actor 1 per phase in webrl.yaml). */
export const WEBRL_EPOCHS = { sftEpochs: 1, ormEpochs: 4, criticEpochs: 1, actorEpochs: 1 } as const;

const epochs = z.number().int().min(1).max(1000).optional();

/** Passes over the data per training job (unset: EMBEDDED_EPOCHS or WEBRL_EPOCHS, by trainer backend). */
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
   * like earlier successes (perplexity band and cap alike). Unset: off, and a frozen config stays as it was.
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

/** Which backend each model role uses: composed from the model backends' settings (models/backends/registry.ts). */
export type ModelsConfig = Config['models'];
/** An actor served as text behind an OpenAI-compatible completions endpoint. */
export type CompletionsActorConfig = Extract<ModelsConfig['actor'], { backend: 'completions' }>;

/** The resolved config and the config as written: their schema joins the registered environment backends (campaignConfig.ts). */
export type { Config, ConfigInput } from './campaignConfig';
export type TemporalConfig = Config['temporal'];
export type S3Config = Config['s3'];
export type StackConfig = Config['stack'];
