/** Each phase's trained actor loaded into vLLM as a runtime LoRA adapter (activities/campaign/deployActivities.ts). */
import { vllmLoraServing } from '../../../activities/campaign/deployActivities';
import type { ModelBackend } from '../contract';
import { settings } from './settings';

export const backend: ModelBackend<typeof settings> = {
  name: 'vllm-lora',
  settings,
  roles: { serving: (serving, { ctx, secrets }) => vllmLoraServing(ctx, serving, secrets) },
};
