/** An external trainer: a command (webrl-torch's, or the user's) run per training job without a shell. */
import { z } from 'zod';

/** The placeholders an external trainer command may use: staged inputs and the output path. */
export const TRAINER_PLACEHOLDERS = ['data', 'init', 'reference', 'critic', 'out'] as const;

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

export const settings = {
  trainer: z.strictObject({
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
};
