/**
 * The whole config's schema: config/schema.ts's sections joined with `campaign.environment`, a union on
 * `backend` whose members are the registered environment backends' own settings
 * (env/backends/registry.ts). It lives apart from config/schema.ts, which the workflow bundle imports
 * and which must therefore not reach the backends' code.
 */
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { chatTemplateFormat } from '../browser/policies/promptFormat';
import { defaultMinWaitMs } from '../browser/settle';
import { backendNamed, environmentSettings } from '../env/backends/registry';
import { trainerLoraRank } from '../models/backends/external/settings';
import { backendDefaults, ModelsSchema } from '../models/backends/registry';
import { campaignFields, ConcurrencySchema, SitesSchema, StackConfigSchema, TemporalConfigSchema, TrainingSchema, EMBEDDED_EPOCHS } from './schema';
import { S3ConfigSchema } from '../storage/settings';

/** The stack's own ports, which the model `stack.llm` serves must not take. */
const STACK_PORTS = ['temporalPort', 'temporalUiPort', 'minioPort', 'minioConsolePort'] as const;

/**
 * The model `stack.llm` serves on this machine: on a port of its own, the one the actor's baseUrl names,
 * with a --max-lora-rank that admits the adapters the trainer writes.
 */
function servedModelIssues(config: z.output<typeof configFields>): { path: string[]; message: string }[] {
  const { llm } = config.stack;
  if (!llm) return [];
  const issues: { path: string[]; message: string }[] = [];
  const clash = STACK_PORTS.find((name) => config.stack[name] === llm.port);
  if (clash) issues.push({ path: ['stack', 'llm', 'port'], message: `port ${llm.port} is stack.${clash}'s: the served model needs a port of its own` });
  const actor = config.models.actor;
  if (actor.backend === 'completions') {
    const url = new URL(actor.baseUrl);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const local = ['127.0.0.1', 'localhost', config.stack.ip].includes(url.hostname);
    if (!local || port !== llm.port) {
      issues.push({
        path: ['models', 'actor', 'baseUrl'],
        message: `the actor is the model stack.llm serves on 127.0.0.1:${llm.port}: expected http://127.0.0.1:${llm.port}/v1, got host ${url.hostname} port ${port}`,
      });
    }
  }
  const trainer = config.models.trainer;
  const rank = trainer.backend === 'external' ? trainerLoraRank(trainer.command) : undefined;
  if (typeof rank === 'number' && rank > llm.maxLoraRank) {
    issues.push({
      path: ['models', 'trainer', 'command'],
      message: `--lora-rank ${rank} is above the served model's --max-lora-rank ${llm.maxLoraRank} (stack.llm.maxLoraRank): vLLM would refuse every adapter`,
    });
  }
  return issues;
}

const CampaignSchema = z.strictObject({
  ...campaignFields,
  // Parsed when first read, so that a backend a test registers may be named (env/backends/registry.ts).
  environment: environmentSettings.default(() => environmentSettings.parse({})),
  training: TrainingSchema.default(TrainingSchema.parse({})),
});

const configFields = z.strictObject({
  campaign: CampaignSchema.default(() => CampaignSchema.parse({})),
  temporal: TemporalConfigSchema.default(TemporalConfigSchema.parse({})),
  s3: S3ConfigSchema.default(S3ConfigSchema.parse({})),
  stack: StackConfigSchema.default(StackConfigSchema.parse({})),
  concurrency: ConcurrencySchema.default(ConcurrencySchema.parse({})),
  sites: SitesSchema.default(SitesSchema.parse({})),
  // Parsed when first read, so that a backend a test registers may be named (models/backends/registry.ts).
  models: ModelsSchema.default(() => ModelsSchema.parse({})),
});

export const ConfigSchema = configFields
  .superRefine((config, ctx) => {
    // The rules the campaign's environment backend adds (a webarena campaign's judge and curriculum, say).
    const { environment } = config.campaign;
    for (const issue of backendNamed(environment.backend).configIssues?.(config, environment) ?? []) ctx.addIssue({ code: 'custom', ...issue });
    if (config.campaign.training.replayDemonstrations && environment.demonstrationTasks === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['campaign', 'training', 'replayDemonstrations'],
        message: 'phase 0 collects no demonstrations to replay: campaign.environment.demonstrationTasks is 0',
      });
    }
    // The actor's chat template must render before anything runs (schema.ts cannot read files: the workflow bundle imports it).
    // A model `stack.llm` serves is provisioned by the main job, so its files are checked there, once they exist.
    const actor = config.models.actor;
    const tokenizer = actor.backend === 'completions' && actor.promptFormat === 'chat-template' ? actor.tokenizer : undefined;
    const provisionedLater = config.stack.llm !== undefined && tokenizer !== undefined && !existsSync(tokenizer);
    if (tokenizer && !provisionedLater) {
      try {
        chatTemplateFormat(tokenizer);
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['models', 'actor', 'tokenizer'], message: (error as Error).message });
      }
    }
    const critic = config.models.critic;
    if (config.stack.llm?.criticPort !== undefined && critic.backend !== 'served') {
      ctx.addIssue({
        code: 'custom',
        path: ['stack', 'llm', 'criticPort'],
        message: `the critic server values the critics the campaign trains: models.critic.backend must be served (it is ${critic.backend})`,
      });
    } else if (
      config.stack.llm?.criticPort !== undefined &&
      critic.backend === 'served' &&
      new URL(critic.baseUrl).port !== String(config.stack.llm.criticPort)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['models', 'critic', 'baseUrl'],
        message: `the main job serves the critic on 127.0.0.1:${config.stack.llm.criticPort} (stack.llm.criticPort); baseUrl names ${critic.baseUrl}`,
      });
    }
    if (config.stack.llm && config.models.actor.backend !== 'completions') {
      ctx.addIssue({
        code: 'custom',
        path: ['stack', 'llm'],
        message: 'the served model is the actor: models.actor.backend must be completions (baseUrl http://127.0.0.1:<port>/v1)',
      });
    }
    for (const issue of servedModelIssues(config)) ctx.addIssue({ code: 'custom', ...issue });
  })
  // Unset endpoints mean the local stack, so changing its ports moves the clients along; an unset
  // observation profile follows the actor's backend (the released WebRL checkpoints read the reference's
  // pages); unset epochs follow the trainer's (an external one trains LLMs: WebRL's).
  .transform((config) => {
    const { environment, training } = config.campaign;
    const defaults = backendDefaults(config.models);
    const epochs = defaults.epochs ?? EMBEDDED_EPOCHS;
    const profile = environment.observation.profile ?? defaults.observationProfile ?? 'default';
    const minWaitMs = environment.observation.minWaitMs ?? defaultMinWaitMs(profile);
    return {
      ...config,
      campaign: {
        ...config.campaign,
        environment: { ...environment, observation: { profile, minWaitMs } },
        training: {
          ...training,
          sftEpochs: training.sftEpochs ?? epochs.sftEpochs,
          ormEpochs: training.ormEpochs ?? epochs.ormEpochs,
          criticEpochs: training.criticEpochs ?? epochs.criticEpochs,
          actorEpochs: training.actorEpochs ?? epochs.actorEpochs,
        },
      },
      temporal: { ...config.temporal, address: config.temporal.address ?? `${config.stack.ip}:${config.stack.temporalPort}` },
      s3: { ...config.s3, endpoint: config.s3.endpoint ?? `http://${config.stack.ip}:${config.stack.minioPort}` },
    };
  });

export type Config = z.infer<typeof ConfigSchema>;
/** A config as written (defaults not yet filled in). */
export type ConfigInput = z.input<typeof ConfigSchema>;
