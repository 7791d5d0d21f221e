/**
 * In-breadth task evolution (webrl.md §1, step 1) over an OpenAI-compatible CHAT endpoint: per site, the
 * model sees seed tasks (failed tasks of earlier phases) and proposes new tasks of about the same
 * difficulty on the same site, in WebArena JSON; `turns` rounds per site, each round told what was already
 * proposed. Replies are parsed and validated item by item: a reply that is not JSON, or an item without
 * a usable intent or with a start URL off the site, becomes a recorded failure, never an exception.
 * Transport failures are retried (bounded) and, when retries run out, also recorded.
 */
import { z } from 'zod';
import { chatText, excerpt, extractJson, type ChatOptions } from './chatText';
import { createClient } from '../../browser/policies/openaiClient';

export interface SeedTask {
  intent: string;
  start_url: string;
  task_id?: string | number;
}

export interface SiteSeeds {
  /** WebArena site name (shopping, shopping_admin, reddit, gitlab, ...). */
  site: string;
  seeds: readonly SeedTask[];
}

export interface GeneratedTask {
  task_id: string;
  sites: string[];
  require_login: boolean;
  storage_state: null;
  start_url: string;
  intent: string;
  intent_template: string;
  instantiation_dict: Record<string, never>;
  require_reset: boolean;
  /** Kept only when the model gave a well-formed one; generated tasks are normally scored by the ORM. */
  eval?: GeneratedEval;
  generation: { site: string; turn: number };
}

export interface GenerationFailure {
  site: string;
  turn: number;
  reason: string;
  raw?: string;
}

export interface TaskGenerationResult {
  tasks: GeneratedTask[];
  failures: GenerationFailure[];
}

export interface TaskGenerationOptions extends ChatOptions {
  /** Task ids are `<idPrefix>-<site>-t<turn>-<n>`. */
  idPrefix: string;
  tasksPerTurn?: number;
  turns?: number;
  /** One line about each site, to ground the model (defaults for the WebArena sites). */
  siteDescriptions?: Record<string, string>;
}

export const SITE_DESCRIPTIONS: Record<string, string> = {
  shopping: 'an online store (OneStopShop): product search and categories, product pages with reviews, cart, orders and the customer account',
  shopping_admin: "the store's admin panel: catalogue, orders, customers, reviews, reports and marketing",
  reddit: 'a forum (Postmill): forums, posts, comments, votes, user profiles',
  gitlab: 'a GitLab instance: projects, repositories, issues, merge requests, members and settings',
  map: 'an OpenStreetMap map: place search, directions and distances',
  wikipedia: 'an offline Wikipedia',
};

const generatedEvalSchema = z.object({
  eval_types: z.array(z.enum(['string_match', 'url_match', 'program_html'])).min(1),
  reference_answers: z.record(z.string(), z.unknown()).nullable().optional(),
  reference_url: z.string().nullable().optional(),
  program_html: z.array(z.unknown()).nullable().optional(),
});
type GeneratedEval = z.infer<typeof generatedEvalSchema>;

const generatedItemSchema = z.object({
  intent: z.string().trim().min(8).max(500),
  start_url: z.string().trim().min(1),
  intent_template: z.string().optional(),
  eval: z.unknown().optional(),
});

const SYSTEM_PROMPT =
  'You design training tasks for AI agents that operate websites through a browser. A task is one instruction a ' +
  'user could give; it must be achievable on the named website alone, and it must be checkable from the final page ' +
  'or from a short answer. You reply with JSON only.';

function userPrompt(site: string, description: string, seeds: readonly SeedTask[], earlier: readonly string[], count: number): string {
  const examples = JSON.stringify(
    seeds.map((seed) => ({ intent: seed.intent, start_url: seed.start_url })),
    null,
    1,
  );
  const already = earlier.length > 0 ? `\nThese were already proposed; do not repeat them either:\n${JSON.stringify(earlier, null, 1)}\n` : '';
  return (
    `Website: ${site} - ${description}.\n\n` +
    `Agents have attempted these tasks on it:\n${examples}\n${already}\n` +
    `Write ${count} NEW tasks for the same website. Keep each about as hard as the examples (a similar number of ` +
    'steps, similar kinds of pages), but vary the goals: other items, other pages, other operations the website ' +
    'supports. Do not repeat or merely rephrase any task above.\n\n' +
    'Reply with a JSON array only. Each element is an object in WebArena task format:\n' +
    '  "intent": the instruction, one sentence;\n' +
    '  "start_url": where the agent starts, written in the same placeholder form as the examples;\n' +
    '  "intent_template": the intent with its variable parts in {braces} (optional);\n' +
    '  "eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": ["..."]}} only when the task ' +
    'asks for information whose answer you are sure of; otherwise leave it out.'
  );
}

/** What start URLs of a site look like: the seeds' placeholder (`__SHOPPING__`) or origin. */
function urlPrefixes(seeds: readonly SeedTask[]): string[] {
  const prefixes = new Set<string>();
  for (const seed of seeds) {
    const placeholder = /^__[A-Z_]+__/.exec(seed.start_url)?.[0];
    if (placeholder) prefixes.add(placeholder);
    else {
      try {
        prefixes.add(new URL(seed.start_url).origin);
      } catch {
        // A seed with an odd URL constrains nothing.
      }
    }
  }
  return [...prefixes];
}

const normalise = (intent: string) =>
  intent
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

export async function generateTasksWithLlm(sites: readonly SiteSeeds[], options: TaskGenerationOptions): Promise<TaskGenerationResult> {
  const client = createClient(options);
  const turns = options.turns ?? 2;
  const count = options.tasksPerTurn ?? 20;
  const tasks: GeneratedTask[] = [];
  const failures: GenerationFailure[] = [];
  for (const { site, seeds } of sites) {
    const description = options.siteDescriptions?.[site] ?? SITE_DESCRIPTIONS[site] ?? `the ${site} website`;
    const prefixes = urlPrefixes(seeds);
    const seen = new Set(seeds.map((seed) => normalise(seed.intent)));
    const proposed: string[] = [];
    for (let turn = 1; turn <= turns; turn++) {
      const fail = (reason: string, raw?: string) => failures.push({ site, turn, reason, ...(raw !== undefined ? { raw: excerpt(raw) } : {}) });
      let reply: string;
      try {
        reply = await chatText(
          client,
          { temperature: 1, ...options },
          SYSTEM_PROMPT,
          userPrompt(site, description, seeds, proposed, count),
          `task generation for ${site}`,
        );
      } catch (error) {
        fail((error as Error).message);
        continue;
      }
      const json = extractJson(reply);
      if (!json.ok) {
        fail(json.reason, reply);
        continue;
      }
      if (!Array.isArray(json.value)) {
        fail('the reply is JSON but not an array of tasks', reply);
        continue;
      }
      json.value.forEach((item, i) => {
        const parsed = generatedItemSchema.safeParse(item);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          fail(`item ${i}: ${issue?.path.join('.') || '(item)'}: ${issue?.message ?? 'invalid'}`, JSON.stringify(item) ?? String(item));
          return;
        }
        const { intent, start_url, intent_template } = parsed.data;
        if (prefixes.length > 0 && !prefixes.some((prefix) => start_url.startsWith(prefix))) {
          fail(`item ${i}: start_url ${JSON.stringify(start_url)} is not on ${site} (expected ${prefixes.join(' or ')})`);
          return;
        }
        const key = normalise(intent);
        if (seen.has(key)) {
          fail(`item ${i}: repeats an existing task: ${JSON.stringify(intent)}`);
          return;
        }
        seen.add(key);
        proposed.push(intent);
        const evaluation = generatedEvalSchema.safeParse(parsed.data.eval);
        tasks.push({
          task_id: `${options.idPrefix}-${site}-t${turn}-${tasks.filter((task) => task.generation.site === site && task.generation.turn === turn).length}`,
          sites: [site],
          require_login: true,
          storage_state: null,
          start_url,
          intent,
          intent_template: intent_template ?? intent,
          instantiation_dict: {},
          require_reset: false,
          ...(evaluation.success ? { eval: evaluation.data } : {}),
          generation: { site, turn },
        });
      });
    }
  }
  return { tasks, failures };
}
