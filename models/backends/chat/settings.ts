/** A chat endpoint (OpenAI-compatible) as the ORM, the task generator, the feasibility judge or WebArena's LLM judge. */
import { z } from 'zod';
import { endpointFields } from '../fields';

const chat = z.literal('chat');

export const settings = {
  orm: z.strictObject({
    backend: chat,
    ...endpointFields,
    topLogprobs: z.number().int().min(2).max(20).default(20),
    maxObservationChars: z.number().int().min(256).optional(),
    /** Adds what each action acted on to its line of the action history; off keeps WebRL's ORM input as its ORM was trained on. */
    actionTargets: z.boolean().default(false),
  }),
  taskGenerator: z.strictObject({
    backend: chat,
    ...endpointFields,
    turns: z.number().int().min(1).max(20).default(2),
    tasksPerTurn: z.number().int().min(1).max(200).default(20),
    /** Failed tasks shown to the model per site. */
    seedsPerSite: z.number().int().min(1).max(100).default(10),
    temperature: z.number().min(0).max(2).default(1),
    /** Top up with embedded evolution when the model yields fewer new tasks than asked. */
    fillWithEmbedded: z.boolean().default(true),
  }),
  feasibility: z.strictObject({
    backend: chat,
    ...endpointFields,
    batchSize: z.number().int().min(1).max(100).default(10),
    /** Keep tasks the model gave no usable verdict for (default: drop them). */
    keepUnjudged: z.boolean().default(false),
  }),
  judge: z.strictObject({ backend: chat, ...endpointFields, maxTokens: z.number().int().min(1).max(32_768).default(768) }),
};
