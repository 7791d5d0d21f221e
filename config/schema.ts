/**
 * The campaign configuration's own sections: one typed object from a campaign file (YAML or JSON) plus
 * environment variables, with defaults for the embedded one-machine setup. Every object is strict, so a
 * misspelt or unknown field is rejected with its path instead of being silently ignored. Secrets never
 * live here: see `secrets.ts`. The parts own theirs (the store's `s3` in storage/settings.ts, each
 * environment backend's in env/backends/<name>/settings.ts); campaignConfig.ts composes the whole
 * config and its type, `Config`.
 */
import { z } from 'zod';
import { DEFAULT_MAX_TOKENS } from '../browser/policies/prompt';
import { SFT_DATA_FORMATS } from '../models/train/sftData';
import { PROMPT_FORMATS } from '../browser/policies/promptFormatNames';
import { WEBARENA_PORTS } from '../env/siteUrls';
import { httpUrl, port } from './fields';

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

/** A remote model endpoint's transport settings (keys come from the environment, see secrets.ts). */
const endpointFields = {
  /** OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 */
  baseUrl: httpUrl,
  model: z.string().min(1),
  /** Per request. */
  timeoutMs: z.number().int().min(100).max(3_600_000).default(120_000),
  /** Tries per request, the first included. */
  maxAttempts: z.number().int().min(1).max(20).default(3),
  retryDelayMs: z.number().int().min(0).max(600_000).default(500),
  /** Requests in flight. */
  concurrency: z.number().int().min(1).max(256).default(4),
};

const embedded = z.strictObject({ backend: z.literal('embedded') });

/** webrl-torch's own --lora-rank when its command sets none (trainers/torch/webrl_torch/cli.py). */
const WEBRL_TORCH_LORA_RANK = 16;

/**
 * The LoRA rank an external trainer's command trains: its --lora-rank, webrl-torch's default when the
 * command runs webrl-torch without one, undefined for another trainer that sets none, `invalid` for a
 * value that is not a whole number of at least 1.
 */
export function trainerLoraRank(command: string): number | 'invalid' | undefined {
  const args = command.split(/\s+/);
  const flag = args.indexOf('--lora-rank');
  const value = flag >= 0 ? (args[flag + 1] ?? '') : args.find((arg) => arg.startsWith('--lora-rank='))?.slice('--lora-rank='.length);
  if (value === undefined) return /(^|[\s/])webrl-torch(\s|$)/.test(command) || /-m webrl_torch\.cli/.test(command) ? WEBRL_TORCH_LORA_RANK : undefined;
  return /^[1-9]\d*$/.test(value) ? Number(value) : 'invalid';
}

/** The placeholders an external trainer command may use: staged inputs and the output path. */
export const TRAINER_PLACEHOLDERS = ['data', 'init', 'reference', 'critic', 'out'] as const;

/**
 * Which backend each model role uses. Everything defaults to the embedded ONNX models and task
 * evolution, so a config without this section behaves as before.
 */
export const ModelsSchema = z
  .strictObject({
    actor: z
      .discriminatedUnion('backend', [
        embedded,
        z.strictObject({
          backend: z.literal('completions'),
          ...endpointFields,
          /** How the server returns prompt log-probs: OpenAI `echo`, or vLLM `prompt_logprobs`. */
          mode: z.enum(['echo', 'prompt_logprobs']).default('echo'),
          maxTokens: z.number().int().min(1).max(32_768).default(DEFAULT_MAX_TOKENS),
          /** Sent with every rollout request, so the server never fills them from the model's generation_config. */
          topP: z.number().gt(0).max(1).default(1),
          /** -1: off (vLLM's top_k). */
          topK: z.number().int().min(-1).default(-1),
          /** The prompt's text (browser/policies/promptFormat.ts): the released WebRL checkpoints' Llama-3 prompt, or the model's own chat template. */
          promptFormat: z.enum(PROMPT_FORMATS).default('webrl-llama3'),
          /** The served model's directory with its tokenizer files (tokenizer_config.json, tokenizer.json, chat_template.jinja): chat-template reads its template there. */
          tokenizer: z.string().min(1).optional(),
          /**
           * The model's context in tokens, which the prompt and maxTokens share: `server` (vLLM's
           * max_model_len, counted with its /tokenize), a number (counted with /tokenize too), or `off`
           * (no token budget: only webrl-llama3's character budget).
           */
          contextTokens: z.union([z.enum(['server', 'off']), z.number().int().min(256).max(10_000_000)]).default('server'),
          /** The checkpoint phase 0's actor starts from (a directory or file here, or a key in the campaign's store); unset: the trainer's base model. */
          init: z.union([z.strictObject({ path: z.string().min(1) }), z.strictObject({ key: z.string().min(1) })]).optional(),
          /** An SFT data file for phase 0's actor (models/train/sftData.ts), checked before the campaign starts. */
          sftData: z
            .strictObject({
              path: z.string().min(1).optional(),
              key: z.string().min(1).optional(),
              format: z.enum(SFT_DATA_FORMATS),
            })
            .refine((source) => (source.path === undefined) !== (source.key === undefined), {
              message: "expected exactly one of path (a file here) and key (in the campaign's store)",
            })
            .optional(),
          /** The oracle's demonstrations in phase 0's actor SFT data (the critic and ORM keep theirs: they need graded outcomes). */
          oracleDemonstrations: z.boolean().default(true),
        }),
      ])
      .default({ backend: 'embedded' }),
    orm: z
      .discriminatedUnion('backend', [
        embedded,
        z.strictObject({
          backend: z.literal('chat'),
          ...endpointFields,
          topLogprobs: z.number().int().min(2).max(20).default(20),
          maxObservationChars: z.number().int().min(256).optional(),
          /** Adds what each action acted on to its line of the action history; off keeps WebRL's ORM input as its ORM was trained on. */
          actionTargets: z.boolean().default(false),
        }),
      ])
      .default({ backend: 'embedded' }),
    critic: z
      .discriminatedUnion('backend', [
        embedded,
        /**
         * No critic filter: each phase rolls out the first tasksPerPhase candidates (the curriculum's
         * seeded draw). The trainer still trains a critic for the actor's advantages. For a trainer whose
         * critic no server serves (webrl-torch on a laptop).
         */
        z.strictObject({ backend: z.literal('none') }),
        z.strictObject({ backend: z.literal('onnx-file'), path: z.string().min(1), threads: z.number().int().min(1).max(64).default(1) }),
        z.strictObject({
          backend: z.literal('http'),
          baseUrl: endpointFields.baseUrl,
          timeoutMs: endpointFields.timeoutMs,
          maxAttempts: endpointFields.maxAttempts,
          retryDelayMs: endpointFields.retryDelayMs,
          batchSize: z.number().int().min(1).max(4096).default(32),
        }),
        /**
         * The critic the campaign trains (webrl-torch's checkpoints), served by `webrl-torch serve-critic
         * --checkpoints DIR`: each phase's critic is synced into `sharedDir` and every request names the
         * one to value with, so the filter of phase k values with the critic phase k-1 trained.
         */
        z.strictObject({
          backend: z.literal('served'),
          baseUrl: endpointFields.baseUrl,
          timeoutMs: endpointFields.timeoutMs,
          maxAttempts: endpointFields.maxAttempts,
          retryDelayMs: endpointFields.retryDelayMs,
          batchSize: z.number().int().min(1).max(4096).default(32),
          /** The server's --checkpoints directory as the workers see it. */
          sharedDir: z.string().min(1),
        }),
      ])
      .default({ backend: 'embedded' }),
    taskGenerator: z
      .discriminatedUnion('backend', [
        embedded,
        z.strictObject({
          backend: z.literal('chat'),
          ...endpointFields,
          turns: z.number().int().min(1).max(20).default(2),
          tasksPerTurn: z.number().int().min(1).max(200).default(20),
          /** Failed tasks shown to the model per site. */
          seedsPerSite: z.number().int().min(1).max(100).default(10),
          temperature: z.number().min(0).max(2).default(1),
          /** Top up with embedded evolution when the model yields fewer new tasks than asked. */
          fillWithEmbedded: z.boolean().default(true),
        }),
      ])
      .default({ backend: 'embedded' }),
    feasibility: z
      .discriminatedUnion('backend', [
        z.strictObject({ backend: z.literal('none') }),
        z.strictObject({
          backend: z.literal('chat'),
          ...endpointFields,
          batchSize: z.number().int().min(1).max(100).default(10),
          /** Keep tasks the model gave no usable verdict for (default: drop them). */
          keepUnjudged: z.boolean().default(false),
        }),
      ])
      .default({ backend: 'none' }),
    /**
     * The judge of WebArena's fuzzy_match and ua_match (`webrl tasks validate -c`): absent or
     * `embedded`, the deterministic judge of the embedded sites; `chat`, an LLM, as WebArena grades.
     */
    judge: z
      .discriminatedUnion('backend', [
        embedded,
        z.strictObject({ backend: z.literal('chat'), ...endpointFields, maxTokens: z.number().int().min(1).max(32_768).default(768) }),
      ])
      .optional(),
    trainer: z
      .discriminatedUnion('backend', [
        embedded,
        z.strictObject({
          backend: z.literal('external'),
          /** e.g. `python train.py --data {data} --init {init} --out {out}`; run without a shell. */
          command: z.string().min(1),
          cwd: z.string().min(1).optional(),
          timeoutSeconds: z
            .number()
            .int()
            .min(1)
            .max(7 * 24 * 3600)
            .optional(),
        }),
      ])
      .default({ backend: 'embedded' }),
    /**
     * How each phase's trained actor reaches the server that rolls it out: `none` (the configured
     * model serves every phase), vLLM's runtime LoRA API, or a user command that (re)deploys it.
     */
    serving: z
      .discriminatedUnion('backend', [
        z.strictObject({ backend: z.literal('none') }),
        z.strictObject({
          backend: z.literal('vllm-lora'),
          /** The vLLM server (started with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True), e.g. http://gpu-1:8000/v1 */
          baseUrl: endpointFields.baseUrl,
          timeoutMs: endpointFields.timeoutMs,
          /**
           * Where the server reads adapters: a directory shared with the workers. `s3` is refused: vLLM
           * loads a path on its own disk (or a hub id) and has no s3 loader.
           */
          adapterLocation: z.enum(['shared-dir', 's3']).default('shared-dir'),
          /** The shared directory as the workers see it (the checkpoint is synced there). */
          sharedDir: z.string().min(1).optional(),
          /** The same directory as the server sees it (default: sharedDir). */
          serverDir: z.string().min(1).optional(),
          /** Adapters of this many latest phases stay loaded; older ones are unloaded. */
          keepPhases: z.number().int().min(2).max(1000).default(2),
          /** The server's --max-lora-rank (vLLM's default 16): higher-rank adapters are refused before training. */
          maxLoraRank: z.number().int().min(1).max(4096).default(16),
        }),
        z.strictObject({
          backend: z.literal('command'),
          /** The server to poll (GET /v1/models) until the deployed name is listed. */
          baseUrl: endpointFields.baseUrl,
          /** e.g. `deploy.sh {checkpoint} {name} {role}`; run without a shell. */
          command: z.string().min(1),
          timeoutSeconds: z
            .number()
            .int()
            .min(1)
            .max(24 * 3600)
            .default(600),
          pollMs: z.number().int().min(10).max(60_000).default(1000),
        }),
      ])
      .default({ backend: 'none' }),
  })
  .superRefine((models, ctx) => {
    if (models.trainer.backend === 'external') {
      const names = [...models.trainer.command.matchAll(/\{([A-Za-z_][\w-]*)\}/g)].map((m) => m[1]!);
      const unknown = names.filter((n) => !(TRAINER_PLACEHOLDERS as readonly string[]).includes(n));
      if (unknown.length) {
        ctx.addIssue({
          code: 'custom',
          path: ['trainer', 'command'],
          message: `unknown placeholder {${unknown[0]}}; expected ${TRAINER_PLACEHOLDERS.map((n) => `{${n}}`).join(', ')}`,
        });
      }
      for (const needed of ['data', 'out']) {
        if (!names.includes(needed)) ctx.addIssue({ code: 'custom', path: ['trainer', 'command'], message: `the command must name {${needed}}` });
      }
    }
    if (models.critic.backend === 'served' && models.trainer.backend !== 'external') {
      ctx.addIssue({
        code: 'custom',
        path: ['critic', 'backend'],
        message: "served values with the critic checkpoints webrl-torch trains: models.trainer.backend must be external (webrl-torch's command)",
      });
    }
    if (models.serving.backend !== 'none' && models.actor.backend !== 'completions') {
      ctx.addIssue({ code: 'custom', path: ['serving', 'backend'], message: 'serving deploys a completions actor; models.actor.backend is embedded' });
    }
    if (models.serving.backend === 'vllm-lora') {
      const serving = models.serving;
      if (serving.adapterLocation === 's3') {
        ctx.addIssue({
          code: 'custom',
          path: ['serving', 'adapterLocation'],
          message:
            'vLLM loads adapters from a path on its own disk (else a hub id) and has no s3 loader: use shared-dir with sharedDir (and serverDir as the server sees it)',
        });
      } else if (!serving.sharedDir) {
        ctx.addIssue({
          code: 'custom',
          path: ['serving', 'sharedDir'],
          message: 'adapterLocation shared-dir needs sharedDir (the directory the server reads adapters from)',
        });
      }
      // What the trainer will write, read from its command, checked against what the server loads.
      if (models.trainer.backend === 'external') {
        const rank = trainerLoraRank(models.trainer.command);
        if (models.trainer.command.split(/\s+/).includes('--full-finetune')) {
          ctx.addIssue({
            code: 'custom',
            path: ['trainer', 'command'],
            message: 'the trainer writes full checkpoints (--full-finetune); vllm-lora serving loads LoRA adapters',
          });
        } else if (typeof rank === 'number' && rank > serving.maxLoraRank) {
          ctx.addIssue({
            code: 'custom',
            path: ['trainer', 'command'],
            message: `--lora-rank ${rank} is above the server's --max-lora-rank ${serving.maxLoraRank} (models.serving.maxLoraRank): vLLM would refuse every adapter`,
          });
        }
      }
    }
    if (models.trainer.backend === 'external' && trainerLoraRank(models.trainer.command) === 'invalid') {
      ctx.addIssue({ code: 'custom', path: ['trainer', 'command'], message: '--lora-rank must be a whole number of at least 1, e.g. --lora-rank 8' });
    }
    if (models.serving.backend === 'command') {
      const unknown = [...models.serving.command.matchAll(/\{([A-Za-z_][\w-]*)\}/g)]
        .map((m) => m[1]!)
        .filter((n) => !['checkpoint', 'name', 'role'].includes(n));
      if (unknown.length)
        ctx.addIssue({ code: 'custom', path: ['serving', 'command'], message: `unknown placeholder {${unknown[0]}}; expected {checkpoint}, {name}, {role}` });
    }
    if (models.actor.backend === 'completions') {
      const actor = models.actor;
      // Whether the template renders is checked where files may be read (config/campaignConfig.ts): the workflow bundle imports this file.
      if (actor.promptFormat === 'chat-template' && !actor.tokenizer) {
        ctx.addIssue({
          code: 'custom',
          path: ['actor', 'tokenizer'],
          message: "promptFormat chat-template renders the model's own template: name the model directory holding its tokenizer files",
        });
      }
      if (!actor.oracleDemonstrations && !actor.sftData && !actor.init) {
        ctx.addIssue({
          code: 'custom',
          path: ['actor', 'oracleDemonstrations'],
          message: 'without oracle demonstrations phase 0 needs an SFT data file (sftData) or a checkpoint to start from (init)',
        });
      }
      if (typeof actor.contextTokens === 'number' && actor.contextTokens <= actor.maxTokens) {
        ctx.addIssue({
          code: 'custom',
          path: ['actor', 'contextTokens'],
          message: `the context (${actor.contextTokens} tokens) must exceed maxTokens (${actor.maxTokens}): the prompt gets what the answer leaves`,
        });
      }
    }
    // A remote actor's weights live with its server; the embedded trainer can only train ONNX actors.
    if (models.actor.backend === 'completions' && models.trainer.backend !== 'external') {
      ctx.addIssue({
        code: 'custom',
        path: ['actor', 'backend'],
        message: 'a completions actor needs models.trainer.backend: external (the embedded trainer trains only the embedded actor)',
      });
    }
  });

export type ModelsConfig = z.infer<typeof ModelsSchema>;
/** An actor served as text behind an OpenAI-compatible completions endpoint. */
export type CompletionsActorConfig = Extract<ModelsConfig['actor'], { backend: 'completions' }>;
