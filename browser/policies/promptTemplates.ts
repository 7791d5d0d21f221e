/**
 * The prompt text, one copy for both languages: trainers/torch/webrl_torch/prompt-templates.json, shipped
 * in the trainer's package and read by webrl_torch/prompt.py as well. The actor's completion prompt
 * (prompt.ts) and the chat ORM's turns (models/remote/chatOrm.ts) fill these templates.
 */
import templates from '../../trainers/torch/webrl_torch/prompt-templates.json' with { type: 'json' };

export interface PromptTemplates {
  charBudget: number;
  actor: { prompt: string; round: string; pastRound: string; pastObservation: string };
  orm: { system: string; user: string; actionLine: string };
}

export const PROMPT_TEMPLATES: PromptTemplates = templates;

/** Fills each `{name}` of `template` in one pass (a value put in is not read again); a name without a value is an error. */
export function fillTemplate(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`prompt template: no value for {${name}} in ${JSON.stringify(template.slice(0, 40))}`);
    return String(value);
  });
}
