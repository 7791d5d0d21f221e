/**
 * The feasibility filter (webrl.md §1, step 2) over an OpenAI-compatible CHAT endpoint: per site, tasks
 * go to the model in batches together with the site's list of goals it cannot support, and the model
 * answers a JSON verdict per task id. A batch whose reply is not usable JSON, or a task the reply leaves
 * out, is recorded as a failure and the task as unjudged (dropped unless `keepUnjudged`); nothing throws
 * for bad model output.
 */
import { z } from 'zod';
import { chatText, excerpt, extractJson, type ChatOptions } from './chatText';
import { mapWithConcurrency } from './concurrency';
import { createClient } from '../../browser/policies/openaiClient';

export interface JudgedTask {
  task_id: string | number;
  intent: string;
  sites: readonly string[];
}

export interface FeasibilityVerdict {
  task_id: string;
  feasible: boolean;
  reason: string;
}

export interface FeasibilityFailure {
  site: string;
  task_ids: string[];
  reason: string;
  raw?: string;
}

export interface FeasibilityResult<T extends JudgedTask> {
  kept: T[];
  dropped: T[];
  verdicts: FeasibilityVerdict[];
  /** Tasks no usable verdict was obtained for. */
  unjudged: T[];
  failures: FeasibilityFailure[];
}

export interface FeasibilityOptions extends ChatOptions {
  /** Per site, goals the site cannot support (defaults for the WebArena sites). */
  infeasibleGoals?: Record<string, readonly string[]>;
  /** Tasks per request (default 10). */
  batchSize?: number;
  concurrency?: number;
  keepUnjudged?: boolean;
}

const ANY_SITE = ['anything that needs another website, an app, e-mail or a phone', 'anything that needs real money, real identities or the physical world'];

export const INFEASIBLE_GOALS: Record<string, readonly string[]> = {
  shopping: [
    'paying with a real card or completing a real-money payment',
    'contacting customer service by chat, phone or e-mail',
    "tracking a parcel on a carrier's website",
    'changing prices, stock or the catalogue (that is the admin site)',
    ...ANY_SITE,
  ],
  shopping_admin: ['sending real e-mails or text messages to customers', 'changing hosting, server or payment-provider settings', ...ANY_SITE],
  reddit: ["seeing other users' private data (e-mail, password, private messages)", 'moderating forums the account does not moderate', ...ANY_SITE],
  gitlab: ['running CI pipelines or deployments on real infrastructure', 'acting as another user', 'reading code that was never pushed', ...ANY_SITE],
};

const SYSTEM_PROMPT =
  'You check whether tasks for a web agent can be done on a given website. A task is feasible when the website ' +
  'itself offers everything needed to complete it (or to answer it) while logged in as an ordinary user of that site. ' +
  'You reply with JSON only.';

function userPrompt(site: string, goals: readonly string[], tasks: readonly JudgedTask[]): string {
  return (
    `Website: ${site}\nThis website cannot support:\n${goals.map((goal) => `- ${goal}`).join('\n')}\n\n` +
    `Tasks:\n${JSON.stringify(
      tasks.map((task) => ({ task_id: String(task.task_id), intent: task.intent })),
      null,
      1,
    )}\n\n` +
    'For every task, decide whether it is feasible on this website. Reply with a JSON array with one object per task: ' +
    '{"task_id": "<its id>", "feasible": true or false, "reason": "<a few words>"}.'
  );
}

const verdictSchema = z.object({
  task_id: z.union([z.string(), z.number()]).transform(String),
  feasible: z.boolean(),
  reason: z.string().default(''),
});

export async function judgeFeasibility<T extends JudgedTask>(tasks: readonly T[], options: FeasibilityOptions): Promise<FeasibilityResult<T>> {
  const client = createClient(options);
  const batchSize = options.batchSize ?? 10;
  const batches: { site: string; tasks: T[] }[] = [];
  const bySite = new Map<string, T[]>();
  for (const task of tasks) {
    const site = task.sites[0] ?? 'unknown';
    bySite.set(site, [...(bySite.get(site) ?? []), task]);
  }
  for (const [site, list] of bySite) {
    for (let i = 0; i < list.length; i += batchSize) batches.push({ site, tasks: list.slice(i, i + batchSize) });
  }
  const failures: FeasibilityFailure[] = [];
  const verdictById = new Map<string, FeasibilityVerdict>();
  await mapWithConcurrency(batches, options.concurrency ?? 4, async ({ site, tasks: batch }) => {
    const ids = batch.map((task) => String(task.task_id));
    const fail = (reason: string, raw?: string, which = ids) =>
      failures.push({ site, task_ids: which, reason, ...(raw !== undefined ? { raw: excerpt(raw) } : {}) });
    const goals = options.infeasibleGoals?.[site] ?? INFEASIBLE_GOALS[site] ?? ANY_SITE;
    let reply: string;
    try {
      reply = await chatText(client, options, SYSTEM_PROMPT, userPrompt(site, goals, batch), `feasibility of ${batch.length} ${site} task(s)`);
    } catch (error) {
      fail((error as Error).message);
      return;
    }
    const json = extractJson(reply);
    if (!json.ok || !Array.isArray(json.value)) {
      fail(json.ok ? 'the reply is JSON but not an array of verdicts' : json.reason, reply);
      return;
    }
    const wanted = new Set(ids);
    for (const item of json.value) {
      const parsed = verdictSchema.safeParse(item);
      if (parsed.success && wanted.has(parsed.data.task_id)) verdictById.set(parsed.data.task_id, parsed.data);
    }
    const missing = ids.filter((id) => !verdictById.has(id));
    if (missing.length > 0) fail(`no valid verdict for ${missing.length} task(s)`, reply, missing);
  });
  const result: FeasibilityResult<T> = { kept: [], dropped: [], verdicts: [], unjudged: [], failures };
  for (const task of tasks) {
    const verdict = verdictById.get(String(task.task_id));
    if (verdict) {
      result.verdicts.push(verdict);
      (verdict.feasible ? result.kept : result.dropped).push(task);
    } else {
      result.unjudged.push(task);
      if (options.keepUnjudged) result.kept.push(task);
    }
  }
  return result;
}
