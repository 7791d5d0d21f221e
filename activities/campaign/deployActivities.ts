/**
 * The serving handoff: after a phase trains the remote-served actor, `deployModels` makes that
 * checkpoint available under the phase's own name (`<campaign>-p<k>-actor`), and every later step that
 * calls the actor (rollouts, evaluation, the replay and reference log-probs) asks for that name: it is
 * recorded beside the checkpoint (`<checkpoint>.served.json`) and made ready by `servedActor`
 * (models/backends/serving.ts). Each serving backend deploys in its own folder
 * (models/backends/vllm-lora/serving.ts, models/backends/command/serving.ts):
 *
 *   vllm-lora  the checkpoint (an adapter directory) is synced to the shared directory, checked against
 *              what vLLM accepts (rank <= maxLoraRank, no DoRA, no bias, modules_to_save only
 *              classifier/score), and loaded with vLLM's runtime LoRA API; adapters of older phases are
 *              unloaded. vLLM keeps runtime adapters in memory only, so `servedActor` loads the adapter
 *              again when a restarted server no longer lists it.
 *   command    the user's command runs with {checkpoint} (a local copy), {name} and {role}; then the
 *              server is polled until it lists the name
 *
 * Idempotent: a name the server already lists with this adapter is not loaded again, a load that races
 * another load of the same adapter (vLLM answers 400 "already been loaded") is a success, and the
 * finished deployment is published once (ctx.once). A server error (5xx) or an unreachable server is
 * retried; an adapter vLLM would refuse, a name listed with another adapter, a 4xx refusal, a failed
 * command or a name never listed fail the phase non-retryably, with the server's message.
 */
import type { RolesFor } from './backends';
import type { TrainActivities } from './contract';
import type { CampaignContext } from './context';
import { withHeartbeats } from '../heartbeats';
import { servedName, servedRecordKey } from '../../models/backends/serving';

export function createDeployActivities(deps: { ctx: CampaignContext; roles: RolesFor }): Pick<TrainActivities, 'deployModels'> {
  const { ctx, roles } = deps;

  return {
    async deployModels(input) {
      const serving = roles(await ctx.config(input)).serving;
      if (!serving) return { served: null };
      return ctx.once(ctx.key(input, 'serving', 'actor'), async () => {
        const planned = { name: servedName(input.campaignId, input.phase, 'actor'), role: 'actor' as const, checkpoint: input.actor };
        const record = await withHeartbeats(() => ({ deploying: planned.name }), serving.deploy(planned, input));
        const written = await ctx.store.putJson(servedRecordKey(input.actor), record);
        return { objects: [written], data: { served: { actor: { name: record.name, checkpoint: record.checkpoint } } } };
      });
    },
  };
}
