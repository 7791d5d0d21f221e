/**
 * Generates the embedded task sets in WebArena format from the seeded world: every template lists
 * its instantiations, a seeded shuffle picks some for the test split and others for train, and
 * held-out templates feed the test split only; composed templates feed neither (only the
 * curriculum's generator, `evolve.ts`). Deterministic for a seed and the code; cached under
 * `.webrl/tasks/`, keyed by seed, split and a hash of the environment's source.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng } from '../random';
import { buildWorld, DEFAULT_SEED, freshStates } from '../world';
import { parseTasks } from './loader';
import { webArenaTaskSchema, type WebArenaTask } from './schema';
import { renderIntent, type TaskTemplate } from './template';
import { GITLAB_TEMPLATES } from './templates/gitlab';
import { REDDIT_TEMPLATES } from './templates/reddit';
import { SHOPPING_ADMIN_TEMPLATES } from './templates/shoppingAdmin';
import { SHOPPING_TEMPLATES } from './templates/shopping';

export type Split = 'train' | 'test';

/** Every template, composed ones included (those only feed the curriculum's generator). */
export const TEMPLATES: TaskTemplate[] = checkCompositions([...SHOPPING_TEMPLATES, ...SHOPPING_ADMIN_TEMPLATES, ...REDDIT_TEMPLATES, ...GITLAB_TEMPLATES]);

/** Ids are unique and a composed template combines two distinct plain templates of its own site. */
function checkCompositions(templates: TaskTemplate[]): TaskTemplate[] {
  const byId = new Map<number, TaskTemplate>();
  for (const t of templates) {
    if (byId.has(t.id)) throw new Error(`template id ${t.id} is used twice`);
    byId.set(t.id, t);
  }
  for (const t of templates) {
    if (!t.composes) continue;
    const [a, b] = t.composes;
    if (a === b) throw new Error(`template ${t.id} composes template ${a} with itself`);
    for (const id of t.composes) {
      const component = byId.get(id);
      if (!component || component.composes || component.site !== t.site)
        throw new Error(`template ${t.id} composes ${id}, which is not a plain ${t.site} template`);
    }
  }
  return templates;
}

/** Tasks per template and split; test ids start at 0, train ids at TRAIN_ID_OFFSET (never collide). */
export const TRAIN_PER_TEMPLATE = 15;
export const TEST_PER_SHARED_TEMPLATE = 3;
export const TEST_PER_HELD_OUT_TEMPLATE = 5;
export const TRAIN_ID_OFFSET = 10_000;

/** Validated like any task file, so a template bug surfaces here rather than at load time. */
export function toTask(template: TaskTemplate, draft: ReturnType<TaskTemplate['drafts']>[number], taskId: number): WebArenaTask {
  return webArenaTaskSchema.parse({
    sites: [template.site],
    task_id: taskId,
    require_login: true,
    storage_state: null,
    start_url: draft.startUrl,
    geolocation: null,
    intent_template: template.intent,
    instantiation_dict: draft.params,
    intent: renderIntent(template.intent, draft.params),
    require_reset: draft.eval.eval_types.includes('program_html'),
    eval: draft.eval,
    intent_template_id: template.id,
    oracle: draft.oracle,
  });
}

/** Both splits at once, so that no instantiation lands in both. */
export function generateSplits(seed = DEFAULT_SEED, templates: readonly TaskTemplate[] = TEMPLATES): Record<Split, WebArenaTask[]> {
  const world = buildWorld(seed);
  const root = new Rng(seed).fork('tasks');
  const train: WebArenaTask[] = [];
  const test: WebArenaTask[] = [];
  // Composed templates are skipped, so adding one leaves both splits exactly as they were.
  for (const template of templates.filter((t) => !t.composes)) {
    const rng = root.fork(`template-${template.id}`);
    const drafts = template.drafts({ world, fresh: freshStates(world), rng: rng.fork('drafts') });
    const seen = new Set<string>();
    const unique = drafts.filter((d) => {
      const intent = renderIntent(template.intent, d.params);
      if (seen.has(intent)) return false;
      seen.add(intent);
      return true;
    });
    const picked = rng.shuffle(unique);
    const testCount = template.heldOut ? TEST_PER_HELD_OUT_TEMPLATE : TEST_PER_SHARED_TEMPLATE;
    for (const draft of picked.slice(0, testCount)) test.push(toTask(template, draft, test.length));
    if (!template.heldOut) {
      for (const draft of picked.slice(testCount, testCount + TRAIN_PER_TEMPLATE)) train.push(toTask(template, draft, TRAIN_ID_OFFSET + train.length));
    }
  }
  return { train, test };
}

export function generateTasks(split: Split, seed = DEFAULT_SEED): WebArenaTask[] {
  return generateSplits(seed)[split];
}

/** Hash of the environment's source (sites, data, templates): a code change invalidates the cache. */
async function sourceFingerprint(): Promise<string> {
  const envRoot = fileURLToPath(new URL('..', import.meta.url));
  const files = (await readdir(envRoot, { recursive: true })).filter((f) => f.endsWith('.ts')).sort();
  const hash = createHash('sha256');
  for (const file of files) hash.update(file).update(await readFile(join(envRoot, file)));
  return hash.digest('hex').slice(0, 12);
}

export async function taskCachePath(split: Split, seed: number, root = process.cwd()): Promise<string> {
  return join(root, '.webrl', 'tasks', `embedded-${seed}-${split}-${await sourceFingerprint()}.json`);
}

/** The split from `.webrl/tasks/` when cached, else generated and cached (written atomically). */
export async function cachedTasks(split: Split, seed = DEFAULT_SEED, root = process.cwd()): Promise<WebArenaTask[]> {
  const path = await taskCachePath(split, seed, root);
  try {
    return parseTasks(JSON.parse(await readFile(path, 'utf8')));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const tasks = generateTasks(split, seed);
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(tasks, null, 1));
  await rename(tmp, path);
  // Files of earlier versions of the code are stale for good.
  const stale = `embedded-${seed}-${split}-`;
  for (const file of await readdir(dirname(path))) {
    if (file.startsWith(stale) && file.endsWith('.json') && join(dirname(path), file) !== path) await rm(join(dirname(path), file), { force: true });
  }
  return tasks;
}
