/** A policy wrapper that keeps every state the policy is shown, and its reply: the rounds training reads. */
import type { Policy } from '../browser/policies/policy';
import type { EpisodeRound } from './orm';

export function recordingPolicy(inner: Policy): { policy: Policy; rounds: EpisodeRound[] } {
  const rounds: EpisodeRound[] = [];
  return {
    rounds,
    policy: {
      name: inner.name,
      async act(input) {
        const output = await inner.act(input);
        rounds.push({
          state: { intent: input.task.intent, history: [...input.history], observation: input.observation },
          response: output.response,
        });
        return output;
      },
    },
  };
}
