/**
 * The local actor as a browser `Policy`, so the episode loop can roll it out: greedy for evaluation, or
 * sampled with a temperature for rollouts. A sample's randomness is seeded by (seed, task, round), so a
 * rollout is reproducible whatever the scheduling of episodes.
 */
import { buildPrompt } from '../browser/policies/prompt';
import type { Policy, PolicyInput, PolicyOutput } from '../browser/policies/policy';
import type { Actor } from './actor';
import { SeededRng, deriveSeed } from '../browser/rng';

export type ActorPolicyOptions = { mode: 'greedy' } | { mode: 'sample'; temperature: number; seed: number };

export function createActorPolicy(actor: Actor, options: ActorPolicyOptions): Policy {
  return {
    name: `onnx-actor-${options.mode}`,
    async act({ task, observation, history }: PolicyInput): Promise<PolicyOutput> {
      const state = { intent: task.intent, history, observation };
      const decision =
        options.mode === 'greedy'
          ? await actor.act(state, { mode: 'greedy' })
          : await actor.act(state, {
              mode: 'sample',
              temperature: options.temperature,
              rng: new SeededRng(deriveSeed(options.seed, task.task_id, history.length)),
            });
      return {
        response: decision.response,
        prompt: buildPrompt(
          task.intent,
          history.map((round) => round.response),
          observation.html,
        ),
      };
    },
  };
}
