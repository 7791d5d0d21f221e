/**
 * The actor's prompt within the model's context: the format renders it (webrl-llama3 keeps its own
 * character budget first), then, when it has more tokens than `contextTokens - maxTokens` (room for the
 * answer), the current observation alone is cut from its end until it fits. The instruction, the history
 * and the format's headers are never cut. Each cut is reported (characters removed) so that rollouts
 * record it. Token counts come from the server's tokenizer, so the same state always gives the same text.
 */
import type { PromptFormat } from './promptFormat';

export interface BuiltPrompt {
  prompt: string;
  /** Characters cut from the end of the current observation (0: it is whole). */
  observationCut: number;
}

export interface PromptBuilder {
  readonly format: PromptFormat;
  build(intent: string, pastResponses: readonly string[], html: string): Promise<BuiltPrompt>;
}

export interface TokenBudget {
  count(prompt: string): Promise<number>;
  /** Tokens the prompt may hold. */
  limit(): Promise<number>;
}

/** Re-counts after a proportional cut; each keeps a little less than the estimate, so few are needed. */
const MAX_CUTS = 8;
const SAFETY = 0.97;

export function createPromptBuilder(format: PromptFormat, budget?: TokenBudget): PromptBuilder {
  return {
    format,
    async build(intent, pastResponses, html) {
      let observation = html.slice(0, format.observationRoom(intent, pastResponses));
      let prompt = format.render(intent, pastResponses, observation);
      if (budget) {
        const limit = await budget.limit();
        let count = await budget.count(prompt);
        if (count > limit) {
          const fixed = await budget.count(format.render(intent, pastResponses, ''));
          for (let cut = 0; cut < MAX_CUTS && count > limit && observation.length > 0; cut++) {
            const share = Math.max(0, limit - fixed) / Math.max(1, count - fixed);
            observation = observation.slice(0, Math.min(observation.length - 1, Math.floor(observation.length * share * SAFETY)));
            prompt = format.render(intent, pastResponses, observation);
            count = await budget.count(prompt);
          }
        }
      }
      return { prompt, observationCut: html.length - observation.length };
    },
  };
}

/** The budget of a served model: its context (configured, else the server's) less the answer's room. */
export function contextBudget(
  counter: { count(prompt: string): Promise<number>; contextTokens(): Promise<number> },
  maxTokens: number,
  contextTokens?: number,
): TokenBudget {
  return {
    count: (prompt) => counter.count(prompt),
    async limit() {
      const context = contextTokens ?? (await counter.contextTokens());
      if (context <= maxTokens) throw new Error(`the model's context (${context} tokens) leaves no room for a prompt with models.actor.maxTokens ${maxTokens}`);
      return context - maxTokens;
    },
  };
}
