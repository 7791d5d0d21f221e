/** Each phase's trained actor loaded into vLLM as a runtime LoRA adapter (activities/campaign/deployActivities.ts). */
import type { ModelBackend } from '../contract';
import { vllmLoraServing } from './serving';
import { settings } from './settings';

export const backend: ModelBackend<typeof settings> = {
  name: 'vllm-lora',
  settings,
  roles: { serving: (serving, { storage, secrets, heartbeats }) => vllmLoraServing(storage, serving, secrets, heartbeats) },
};
