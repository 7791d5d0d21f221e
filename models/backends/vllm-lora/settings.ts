/** Each phase's trained actor loaded into a vLLM server with its runtime LoRA API (activities/campaign/deployActivities.ts). */
import { z } from 'zod';
import { endpointFields } from '../fields';

export const settings = {
  serving: z.strictObject({
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
};
