/** An actor served as text behind an OpenAI-compatible completions endpoint (vLLM, TGI, ...). */
import { z } from 'zod';
import { DEFAULT_MAX_TOKENS } from '../../../browser/policies/prompt';
import { SFT_DATA_FORMATS } from '../../train/sftData';
import { PROMPT_FORMATS } from '../../../browser/policies/promptFormatNames';
import { endpointFields } from '../fields';

export const settings = {
  actor: z.strictObject({
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
};

/** An actor served as text behind an OpenAI-compatible completions endpoint. */
export type CompletionsActorSettings = z.output<typeof settings.actor>;
