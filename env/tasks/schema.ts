/**
 * The WebArena task-config format (as in WebArena-Lite's test file), validated with zod at the file
 * boundary. Lenient where real files vary (a lone string where a list is expected, null for "none"),
 * strict where a typo would silently change a verdict (unknown matcher names, eval types, sites).
 * Embedded tasks add one field, `oracle`: the solution as `OracleStep[]`.
 */
import { z } from 'zod';
import { oracleStepSchema } from '../../browser/tasks';
import { SITE_NAMES } from '../siteUrls';

const stringList = z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : [v]));
const scalarString = z.union([z.string(), z.number()]).transform(String);

/** fuzzy_match holds a list of reference facts, or "N/A" for an unachievable task. */
const fuzzyReference = z.union([z.literal('N/A'), stringList]);

export const referenceAnswersSchema = z
  .object({
    exact_match: scalarString.optional(),
    must_include: stringList.optional(),
    must_exclude: stringList.optional(),
    fuzzy_match: fuzzyReference.optional(),
  })
  .strict();

export const requiredContentsSchema = z
  .object({
    exact_match: scalarString.optional(),
    must_include: stringList.optional(),
    must_exclude: stringList.optional(),
    fuzzy_match: fuzzyReference.optional(),
  })
  .strict()
  .refine((v) => Object.keys(v).length > 0, 'required_contents names no matcher');

export const programHtmlTargetSchema = z
  .object({
    url: z.string(),
    locator: z.string(),
    required_contents: requiredContentsSchema,
    prep_actions: z.array(z.string()).optional(),
  })
  .strict();

/**
 * `webarena_verified`: WebArena-Verified's official evaluator scores the task it carries under `verified`
 * (env/tasks/verified.ts), with the harness of that name.
 */
export const EVAL_TYPES = ['string_match', 'url_match', 'program_html', 'webarena_verified'] as const;

export const evalSchema = z
  .object({
    eval_types: z.array(z.enum(EVAL_TYPES)).min(1),
    reference_answers: referenceAnswersSchema.nullable().optional(),
    reference_url: z.string().nullable().optional(),
    url_note: z.enum(['EXACT', 'GOLD in PRED']).optional(),
    program_html: z.array(programHtmlTargetSchema).nullable().optional(),
    string_note: z.string().nullable().optional(),
    reference_answer_raw_annotation: z.string().nullable().optional(),
  })
  .loose()
  .superRefine((ev, ctx) => {
    if (ev.eval_types.includes('string_match') && !ev.reference_answers)
      ctx.addIssue({ code: 'custom', path: ['reference_answers'], message: 'string_match needs reference_answers' });
    if (ev.eval_types.includes('url_match') && !ev.reference_url)
      ctx.addIssue({ code: 'custom', path: ['reference_url'], message: 'url_match needs reference_url' });
    if (ev.eval_types.includes('program_html') && !ev.program_html?.length)
      ctx.addIssue({ code: 'custom', path: ['program_html'], message: 'program_html needs at least one target' });
  });

/** A placeholder of WebArena's (`__SHOPPING__`), optionally followed by a path. */
const PLACEHOLDER_START = /^__[A-Z_]+__(?:[/?#].*)?$/;

/**
 * Where a task starts: an http(s) URL or a site placeholder, several joined by ` |AND| ` (one tab
 * each); anything else (`javascript:`, `file:`) is refused, since the browser would run it.
 */
const startUrlSchema = z
  .string()
  .min(1)
  .refine(
    (value) =>
      value.split(' |AND| ').every((part) => {
        if (PLACEHOLDER_START.test(part)) return true;
        try {
          return ['http:', 'https:'].includes(new URL(part).protocol);
        } catch {
          return false;
        }
      }),
    { message: 'expected an http(s) URL or a site placeholder such as __SHOPPING__ (several joined by " |AND| ")' },
  );

export const webArenaTaskSchema = z
  .object({
    sites: z.array(z.enum(SITE_NAMES)).min(1),
    task_id: z.union([z.number().int(), z.string().min(1)]),
    require_login: z.boolean().optional(),
    storage_state: z.string().nullable().optional(),
    start_url: startUrlSchema,
    geolocation: z.unknown().optional(),
    intent_template: z.string().optional(),
    instantiation_dict: z.record(z.string(), z.unknown()).optional(),
    intent: z.string().min(1),
    require_reset: z.boolean().optional(),
    eval: evalSchema,
    intent_template_id: z.number().int().optional(),
    oracle: z.array(oracleStepSchema).optional(),
    /** The task in WebArena-Verified's format, for its official evaluator (eval type `webarena_verified`). */
    verified: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();

export type WebArenaTask = z.infer<typeof webArenaTaskSchema>;
export type ProgramHtmlTarget = z.infer<typeof programHtmlTargetSchema>;
export type RequiredContents = z.infer<typeof requiredContentsSchema>;
export type ReferenceAnswers = z.infer<typeof referenceAnswersSchema>;

/** A task file's problem, always naming the task and the field. */
export class TaskConfigError extends Error {
  override name = 'TaskConfigError';
  constructor(
    readonly taskId: string | number,
    readonly field: string,
    readonly problem: string,
  ) {
    super(`task ${taskId}: ${field}: ${problem}`);
  }
}

export function formatZodPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, key) => (typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)), '');
}
