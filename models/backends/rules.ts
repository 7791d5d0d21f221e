/**
 * The rules between a `models` section's roles (and the few within one backend's settings that read
 * more than one field), in the order they are checked; each finds its problems as issues on a path
 * under `models`. The registry applies them to the composed schema (models/backends/registry.ts).
 */
import type { z } from 'zod';
import { DEPLOY_PLACEHOLDERS, settings as command } from './command/settings';
import { settings as completions } from './completions/settings';
import type { RoleName, RoleSettingsSchema } from './contract';
import { settings as external, TRAINER_PLACEHOLDERS, trainerLoraRank } from './external/settings';
import { settings as vllmLora } from './vllm-lora/settings';

/** A `models` section as the rules read it: each role's settings, told apart by `backend`. */
export type ModelsSettings = { [R in Exclude<RoleName, 'judge'>]: { backend: string } };

export interface ModelIssue {
  path: (string | number)[];
  message: string;
}

type ModelRule = (models: ModelsSettings) => ModelIssue[];

/** Whether `value` is the settings `schema` parses (its `backend` names it). */
function is<S extends RoleSettingsSchema>(schema: S, value: { backend: string }): value is { backend: string } & z.output<S> {
  return value.backend === schema.shape.backend.value;
}

const placeholders = (command: string) => [...command.matchAll(/\{([A-Za-z_][\w-]*)\}/g)].map((m) => m[1]!);

/** An external trainer's command names known placeholders, and its data and output. */
const trainerCommandPlaceholders: ModelRule = ({ trainer }) => {
  if (!is(external.trainer, trainer)) return [];
  const names = placeholders(trainer.command);
  const unknown = names.filter((n) => !(TRAINER_PLACEHOLDERS as readonly string[]).includes(n));
  const issues: ModelIssue[] = [];
  if (unknown.length) {
    issues.push({
      path: ['trainer', 'command'],
      message: `unknown placeholder {${unknown[0]}}; expected ${TRAINER_PLACEHOLDERS.map((n) => `{${n}}`).join(', ')}`,
    });
  }
  for (const needed of ['data', 'out'])
    if (!names.includes(needed)) issues.push({ path: ['trainer', 'command'], message: `the command must name {${needed}}` });
  return issues;
};

/** The served critic values the checkpoints webrl-torch trains. */
const servedCriticNeedsExternalTrainer: ModelRule = ({ critic, trainer }) =>
  critic.backend === 'served' && !is(external.trainer, trainer)
    ? [
        {
          path: ['critic', 'backend'],
          message: "served values with the critic checkpoints webrl-torch trains: models.trainer.backend must be external (webrl-torch's command)",
        },
      ]
    : [];

/** Serving deploys what a completions actor's server answers with. */
const servingNeedsCompletionsActor: ModelRule = ({ serving, actor }) =>
  serving.backend !== 'none' && !is(completions.actor, actor)
    ? [{ path: ['serving', 'backend'], message: 'serving deploys a completions actor; models.actor.backend is embedded' }]
    : [];

/** vLLM loads adapters from a directory it shares with the workers, of a rank it admits, trained as LoRA. */
const vllmLoraAdapters: ModelRule = ({ serving, trainer }) => {
  if (!is(vllmLora.serving, serving)) return [];
  const issues: ModelIssue[] = [];
  if (serving.adapterLocation === 's3') {
    issues.push({
      path: ['serving', 'adapterLocation'],
      message:
        'vLLM loads adapters from a path on its own disk (else a hub id) and has no s3 loader: use shared-dir with sharedDir (and serverDir as the server sees it)',
    });
  } else if (!serving.sharedDir) {
    issues.push({ path: ['serving', 'sharedDir'], message: 'adapterLocation shared-dir needs sharedDir (the directory the server reads adapters from)' });
  }
  // What the trainer will write, read from its command, checked against what the server loads.
  if (is(external.trainer, trainer)) {
    const rank = trainerLoraRank(trainer.command);
    if (trainer.command.split(/\s+/).includes('--full-finetune')) {
      issues.push({ path: ['trainer', 'command'], message: 'the trainer writes full checkpoints (--full-finetune); vllm-lora serving loads LoRA adapters' });
    } else if (typeof rank === 'number' && rank > serving.maxLoraRank) {
      issues.push({
        path: ['trainer', 'command'],
        message: `--lora-rank ${rank} is above the server's --max-lora-rank ${serving.maxLoraRank} (models.serving.maxLoraRank): vLLM would refuse every adapter`,
      });
    }
  }
  return issues;
};

const trainerLoraRankIsWhole: ModelRule = ({ trainer }) =>
  is(external.trainer, trainer) && trainerLoraRank(trainer.command) === 'invalid'
    ? [{ path: ['trainer', 'command'], message: '--lora-rank must be a whole number of at least 1, e.g. --lora-rank 8' }]
    : [];

const deployCommandPlaceholders: ModelRule = ({ serving }) => {
  if (!is(command.serving, serving)) return [];
  const unknown = placeholders(serving.command).filter((n) => !(DEPLOY_PLACEHOLDERS as readonly string[]).includes(n));
  return unknown.length ? [{ path: ['serving', 'command'], message: `unknown placeholder {${unknown[0]}}; expected {checkpoint}, {name}, {role}` }] : [];
};

/** A completions actor's prompt, phase 0 and context settings agree. */
const completionsActorSettings: ModelRule = ({ actor }) => {
  if (!is(completions.actor, actor)) return [];
  const issues: ModelIssue[] = [];
  // Whether the template renders is checked where files may be read (config/campaignConfig.ts).
  if (actor.promptFormat === 'chat-template' && !actor.tokenizer) {
    issues.push({
      path: ['actor', 'tokenizer'],
      message: "promptFormat chat-template renders the model's own template: name the model directory holding its tokenizer files",
    });
  }
  if (!actor.oracleDemonstrations && !actor.sftData && !actor.init) {
    issues.push({
      path: ['actor', 'oracleDemonstrations'],
      message: 'without oracle demonstrations phase 0 needs an SFT data file (sftData) or a checkpoint to start from (init)',
    });
  }
  if (typeof actor.contextTokens === 'number' && actor.contextTokens <= actor.maxTokens) {
    issues.push({
      path: ['actor', 'contextTokens'],
      message: `the context (${actor.contextTokens} tokens) must exceed maxTokens (${actor.maxTokens}): the prompt gets what the answer leaves`,
    });
  }
  return issues;
};

/** A remote actor's weights live with its server; the embedded trainer can only train ONNX actors. */
const completionsActorNeedsExternalTrainer: ModelRule = ({ actor, trainer }) =>
  is(completions.actor, actor) && !is(external.trainer, trainer)
    ? [
        {
          path: ['actor', 'backend'],
          message: 'a completions actor needs models.trainer.backend: external (the embedded trainer trains only the embedded actor)',
        },
      ]
    : [];

/** The rules, in the order their issues are reported. */
export const MODEL_RULES: readonly ModelRule[] = [
  trainerCommandPlaceholders,
  servedCriticNeedsExternalTrainer,
  servingNeedsCompletionsActor,
  vllmLoraAdapters,
  trainerLoraRankIsWhole,
  deployCommandPlaceholders,
  completionsActorSettings,
  completionsActorNeedsExternalTrainer,
];
