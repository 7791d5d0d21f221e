/**
 * WebArena-Verified's task format (ServiceNow's audited WebArena: `sites`, `task_id`, `start_urls`,
 * `intent`, `eval` as a list of evaluator configs, `revision`) and its subsets (`{ task_ids }`).
 * A Verified task is checked here at the file boundary, then carried as an `EnvironmentTask` whose
 * only eval type is `webarena_verified` and whose `verified` field is the task as the file has it:
 * the official evaluator (env/evaluators/harnesses/verified/) scores it from that, placeholders and all.
 */
import { z } from 'zod';
import { oracleStepSchema } from '../../browser/tasks';
import { PLACEHOLDERS, SITE_NAMES } from '../siteUrls';
import type { WebArenaTask } from './schema';

/** The values an agent's response may take (the package's MainObjectiveType and Status, upper case). */
export const VERIFIED_TASK_TYPES = ['RETRIEVE', 'MUTATE', 'NAVIGATE'] as const;
export const VERIFIED_STATUSES = [
  'SUCCESS',
  'ACTION_NOT_ALLOWED_ERROR',
  'PERMISSION_DENIED_ERROR',
  'NOT_FOUND_ERROR',
  'DATA_VALIDATION_ERROR',
  'UNKNOWN_ERROR',
] as const;

const caseless = <T extends readonly [string, ...string[]]>(values: T) =>
  z.string().transform((value, ctx) => {
    const upper = value.toUpperCase();
    if ((values as readonly string[]).includes(upper)) return upper as T[number];
    ctx.addIssue({ code: 'custom', message: `expected one of ${values.join(', ')}, got '${value}'` });
    return z.NEVER;
  });

/** The JSON Schema types a results_schema may name (its `type`, at any depth). */
const JSON_SCHEMA_TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object', 'null'];

/** Every `type` of a JSON Schema (nested under items, properties, anyOf...) that JSON Schema does not have. */
function unknownSchemaTypes(schema: unknown, path = 'results_schema'): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  if (Array.isArray(schema)) return schema.flatMap((item, i) => unknownSchemaTypes(item, `${path}[${i}]`));
  return Object.entries(schema).flatMap(([key, value]) => {
    if (key !== 'type') return unknownSchemaTypes(value, `${path}.${key}`);
    const types = Array.isArray(value) ? value : [value];
    return types.filter((type) => !JSON_SCHEMA_TYPES.includes(type as string)).map((type) => `${path}.type ${JSON.stringify(type)}`);
  });
}

const resultsSchema = z.record(z.string(), z.unknown()).superRefine((schema, ctx) => {
  for (const bad of unknownSchemaTypes(schema)) ctx.addIssue({ code: 'custom', message: `${bad} is not a JSON Schema type (${JSON_SCHEMA_TYPES.join(', ')})` });
});

const agentResponseEvaluator = z.looseObject({
  evaluator: z.literal('AgentResponseEvaluator'),
  results_schema: resultsSchema,
  expected: z.looseObject({ task_type: caseless(VERIFIED_TASK_TYPES), status: caseless(VERIFIED_STATUSES), retrieved_data: z.unknown().optional() }),
});

const nonBlank = z.string().refine((value) => value.trim() !== '', { message: 'blank: expected the URL the request must go to' });

const networkEventEvaluator = z.looseObject({
  evaluator: z.literal('NetworkEventEvaluator'),
  expected: z.looseObject({ url: z.union([nonBlank, z.array(nonBlank).min(1)]) }),
});

const KNOWN_PLACEHOLDERS = Object.values(PLACEHOLDERS);

/** Where a Verified task starts: one of WebArena's site placeholders (optionally with a path) or an http(s) URL. */
const verifiedStartUrl = z.string().superRefine((value, ctx) => {
  const placeholder = /^(__[A-Z_]+__)(?:[/?#].*)?$/.exec(value)?.[1];
  if (placeholder && !KNOWN_PLACEHOLDERS.includes(placeholder)) {
    ctx.addIssue({ code: 'custom', message: `${placeholder} is no WebArena site's placeholder (${KNOWN_PLACEHOLDERS.join(', ')})` });
  } else if (!placeholder && !/^https?:\/\/\S+$/.test(value)) {
    ctx.addIssue({ code: 'custom', message: 'expected a site placeholder such as __SHOPPING__ or an http(s) URL' });
  }
});

export const verifiedTaskSchema = z
  .looseObject({
    /** WebArena's sites only: a MiniWoB++ task has no WebArena-Verified evaluator. */
    sites: z
      .array(z.enum(SITE_NAMES, { error: (issue) => `expected one of WebArena's sites (${SITE_NAMES.join(', ')}), got ${JSON.stringify(issue.input)}` }))
      .min(1),
    task_id: z.number().int().nonnegative(),
    intent_template_id: z.number().int(),
    start_urls: z.array(verifiedStartUrl).min(1),
    intent: z.string().min(1),
    intent_template: z.string().min(1),
    instantiation_dict: z.record(z.string(), z.unknown()),
    eval: z.array(z.discriminatedUnion('evaluator', [agentResponseEvaluator, networkEventEvaluator])).min(1),
    revision: z.number().int().min(1),
    /** Tasks `webrl env export --format webarena-verified` writes carry their oracle plans. */
    oracle: z.array(oracleStepSchema).optional(),
  })
  .superRefine((task, ctx) => {
    task.start_urls.forEach((url, i) => {
      const site = SITE_NAMES.find((name) => PLACEHOLDERS[name] === url.split(/[/?#]/)[0]);
      if (site && !task.sites.includes(site))
        ctx.addIssue({
          code: 'custom',
          path: ['start_urls', i],
          message: `starts on site ${site}, which the task's sites (${task.sites.join(', ')}) do not list`,
        });
    });
    const responses = task.eval.filter((entry) => entry.evaluator === 'AgentResponseEvaluator').length;
    if (responses !== 1) ctx.addIssue({ code: 'custom', path: ['eval'], message: `expected exactly one AgentResponseEvaluator, found ${responses}` });
  });
export type VerifiedTask = z.output<typeof verifiedTaskSchema>;

/** Whether a task file's item is in Verified's format (its own fields, not WebArena's). */
export function isVerifiedItem(item: unknown): boolean {
  return typeof item === 'object' && item !== null && ('start_urls' in item || Array.isArray((item as { eval?: unknown }).eval));
}

/** What an agent is asked to do: the expected response's task type (lower case, as the prompt names it). */
export function verifiedTaskType(task: Pick<VerifiedTask, 'eval'>): 'retrieve' | 'mutate' | 'navigate' {
  const entry = task.eval.find((e) => e.evaluator === 'AgentResponseEvaluator') as z.output<typeof agentResponseEvaluator>;
  return entry.expected.task_type.toLowerCase() as 'retrieve' | 'mutate' | 'navigate';
}

/**
 * The task in this project's task shape: start URLs joined as WebArena joins them, the one eval type
 * `webarena_verified`, and the file's task (without its oracle plan) under `verified`.
 */
export function fromVerified(raw: Record<string, unknown>, task: VerifiedTask) {
  const { oracle, ...verified } = raw;
  return {
    sites: task.sites,
    task_id: task.task_id,
    intent_template_id: task.intent_template_id,
    intent_template: task.intent_template,
    instantiation_dict: task.instantiation_dict,
    start_url: task.start_urls.join(' |AND| '),
    intent: task.intent,
    eval: { eval_types: ['webarena_verified' as const] },
    verified,
    ...(oracle === undefined ? {} : { oracle: task.oracle }),
  };
}

const FORMAT_BY_TYPE = {
  retrieve: '"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": [the values asked for, in the format the task gives], "error_details": null',
  mutate: '"task_type": "MUTATE", "status": "SUCCESS", "retrieved_data": null, "error_details": null',
  navigate: '"task_type": "NAVIGATE", "status": "SUCCESS", "retrieved_data": null, "error_details": null',
} as const;

/**
 * The task's intent with the answer format the benchmark expects for its kind of task, as the actor
 * reads it; a task that cannot be done ends with the status that says why.
 */
export function verifiedIntent(task: Pick<WebArenaTask, 'intent' | 'verified'>): string {
  const parsed = verifiedTaskSchema.safeParse(task.verified);
  if (!parsed.success) return task.intent;
  return (
    `${task.intent}\nWhen done, answer with exit(message='{${FORMAT_BY_TYPE[verifiedTaskType(parsed.data)]}}') (a JSON object; ` +
    'if the task cannot be done, "status" is one of NOT_FOUND_ERROR, ACTION_NOT_ALLOWED_ERROR, PERMISSION_DENIED_ERROR, DATA_VALIDATION_ERROR, UNKNOWN_ERROR and "error_details" says why).'
  );
}

/** A subset file (`assets/dataset/subsets/*.json`): the ids it selects. */
export const verifiedSubsetSchema = z.looseObject({ task_ids: z.array(z.number().int().nonnegative()).min(1) });

/** Whether a file's JSON is a subset (an object with `task_ids`) rather than tasks. */
export function isSubset(data: unknown): boolean {
  return typeof data === 'object' && data !== null && !Array.isArray(data) && 'task_ids' in data;
}

/** The JSON response that solves a task, as its AgentResponseEvaluator expects it. */
export function expectedResponse(task: Pick<VerifiedTask, 'eval'>): string {
  const entry = task.eval.find((e) => e.evaluator === 'AgentResponseEvaluator') as z.output<typeof agentResponseEvaluator>;
  const { task_type, status, retrieved_data } = entry.expected;
  return JSON.stringify({ task_type, status, retrieved_data: retrieved_data ?? null, error_details: null });
}

/**
 * An embedded task (WebArena's format, as `webrl env export` writes it) in WebArena-Verified's format:
 * a string_match task retrieves its reference values; a url_match-only task navigates, checked on its
 * last navigation by a NetworkEventEvaluator; a program_html task mutates (the official evaluator
 * checks its response; the page state its program_html reads has no Verified evaluator). The oracle
 * plan ends with the response that solves it.
 */
export function toVerifiedTask(task: WebArenaTask): Record<string, unknown> {
  const types = task.eval.eval_types;
  const references = task.eval.reference_answers;
  const retrieve = types.includes('string_match') && references;
  const navigate = !retrieve && types.join() === 'url_match' && task.eval.reference_url;
  const values = retrieve ? [...(references.exact_match === undefined ? [] : [references.exact_match]), ...(references.must_include ?? [])] : null;
  const verifiedEval: Record<string, unknown>[] = [
    {
      evaluator: 'AgentResponseEvaluator',
      results_schema: values ? { type: 'array', items: { type: 'string' } } : { type: 'null' },
      expected: { task_type: values ? 'retrieve' : navigate ? 'navigate' : 'mutate', status: 'SUCCESS', retrieved_data: values },
    },
    ...(navigate ? [{ evaluator: 'NetworkEventEvaluator', expected: { url: task.eval.reference_url, http_method: 'GET' } }] : []),
  ];
  const parsed = verifiedTaskSchema.parse({
    sites: task.sites,
    task_id: Number(task.task_id),
    intent_template_id: task.intent_template_id ?? 0,
    start_urls: task.start_url.split(' |AND| ').map((url) => url.trim()),
    intent: task.intent,
    intent_template: task.intent_template ?? task.intent,
    instantiation_dict: task.instantiation_dict ?? {},
    eval: verifiedEval,
    revision: 1,
  });
  const answer = expectedResponse(parsed);
  const oracle = task.oracle?.map((step) => (step.action === 'exit' ? { action: 'exit' as const, message: answer } : step));
  return { ...parsed, eval: verifiedEval, ...(oracle ? { oracle } : {}) };
}
