/**
 * The embedded task generator of the self-evolving curriculum (WebRL's "in-breadth evolving"): from
 * tasks the actor failed, new tasks on the same site, of two kinds:
 * - slot variations: the failed task's template instantiated with slot values it has not been asked
 *   with before;
 * - compositions: when the failed task's template is a component of a composed template (one that
 *   combines the constraints of two templates, `TaskTemplate.composes`), instantiations of the
 *   composed template, preferring those that keep the failed task's own slot values (same category,
 *   same project, ...).
 * Each failed seed alternates between the two kinds while both have fresh tasks, starting with a slot
 * variation. Generated tasks carry their template's id, so a failed composed task evolves further.
 * Per site, up to 10 failed seeds are sampled per generation turn, 2 turns per site, as in the paper.
 * Held-out (test-only) templates, composed templates with a held-out component and every intent
 * already seen (train, test, earlier phases) are never generated, so the test split stays held out.
 * Deterministic for (seed, failed tasks, known intents); ids count up from `firstTaskId`.
 */
import { Rng } from '../random';
import { buildWorld, freshStates } from '../world';
import { TEMPLATES, toTask } from './generate';
import type { EvolveRequest } from '../backends/contract';
import type { WebArenaTask } from './schema';
import { renderIntent, type TaskDraft, type TaskTemplate } from './template';

export const SEEDS_PER_TURN = 10;
export const TURNS_PER_SITE = 2;

/** The embedded world's evolution: a request over its tasks, in the world of `worldSeed`. */
export interface EmbeddedEvolveRequest extends EvolveRequest<WebArenaTask> {
  worldSeed: number;
}

/** Every instantiation of a template, drawn exactly as the task splits draw them. */
function draftsOf(template: TaskTemplate, worldSeed: number, world: ReturnType<typeof buildWorld>): TaskDraft[] {
  const rng = new Rng(worldSeed).fork('tasks').fork(`template-${template.id}`);
  return template.drafts({ world, fresh: freshStates(world), rng: rng.fork('drafts') });
}

/** Templates the generator may draw from: no held-out template, no composition of a held-out one. */
export function evolvableTemplates(templates: readonly TaskTemplate[] = TEMPLATES): Map<number, TaskTemplate> {
  const all = new Map(templates.map((t) => [t.id, t]));
  const usable = (t: TaskTemplate) =>
    !t.heldOut &&
    (t.composes ?? []).every((id) => {
      const component = all.get(id);
      return component !== undefined && !component.heldOut;
    });
  return new Map(templates.filter(usable).map((t) => [t.id, t]));
}

/** Usable composed templates by the id of each of their components. */
function compositionsByComponent(templates: Map<number, TaskTemplate>): Map<number, TaskTemplate[]> {
  const out = new Map<number, TaskTemplate[]>();
  for (const t of templates.values()) for (const id of t.composes ?? []) out.set(id, [...(out.get(id) ?? []), t]);
  return out;
}

/** How many of the seed task's slot values a draft keeps. */
function sharedSlots(seed: WebArenaTask, draft: TaskDraft): number {
  const own = seed.instantiation_dict ?? {};
  return Object.entries(draft.params).filter(([key, value]) => key in own && String(own[key]) === String(value)).length;
}

type Candidate = { template: TaskTemplate; draft: TaskDraft };

export function evolveTasks(request: EmbeddedEvolveRequest): WebArenaTask[] {
  const templates = evolvableTemplates();
  const compositions = compositionsByComponent(templates);
  const bySite = new Map<string, WebArenaTask[]>();
  for (const task of request.failed) {
    if (task.intent_template_id === undefined || !templates.has(task.intent_template_id)) continue;
    const site = task.sites[0] ?? 'unknown';
    bySite.set(site, [...(bySite.get(site) ?? []), task]);
  }
  if (bySite.size === 0 || request.count <= 0) return [];

  const world = buildWorld(request.worldSeed);
  const drafts = new Map<number, TaskDraft[]>();
  const draftsFor = (template: TaskTemplate) => {
    if (!drafts.has(template.id)) drafts.set(template.id, draftsOf(template, request.worldSeed, world));
    return drafts.get(template.id)!;
  };
  const known = new Set(request.knownIntents);
  const fresh = (template: TaskTemplate): Candidate[] =>
    draftsFor(template)
      .filter((d) => !known.has(renderIntent(template.intent, d.params)))
      .map((draft) => ({ template, draft }));
  const rng = new Rng(request.seed).fork('evolve');
  const sites = [...bySite.keys()].sort();
  // Sites share the budget evenly; a site that runs out of fresh variants leaves its share to others.
  const perTurn = Math.max(1, Math.ceil(request.count / (sites.length * TURNS_PER_SITE)));
  const created: WebArenaTask[] = [];
  // Tasks made from each seed so far (by task id): even counts draw a slot variation first, odd a composition.
  const madeFrom = new Map<string, number>();

  /** A slot variation of the seed's own template, drawn as before compositions existed. */
  const variation = (seedTask: WebArenaTask, label: string): Candidate | undefined => {
    const pool = fresh(templates.get(seedTask.intent_template_id!)!);
    return pool.length ? rng.fork(label).pick(pool) : undefined;
  };
  /** A composed task, among those keeping the most of the seed's slot values. */
  const composition = (seedTask: WebArenaTask, label: string): Candidate | undefined => {
    const pool = (compositions.get(seedTask.intent_template_id!) ?? []).flatMap(fresh);
    if (pool.length === 0) return undefined;
    const scores = pool.map((c) => sharedSlots(seedTask, c.draft));
    const best = Math.max(...scores);
    return rng.fork(`${label}-composed`).pick(pool.filter((_, i) => scores[i] === best));
  };

  for (let turn = 0; turn < TURNS_PER_SITE && created.length < request.count; turn++) {
    for (const site of sites) {
      const seeds = rng.fork(`${site}-${turn}`).sample(bySite.get(site)!, SEEDS_PER_TURN);
      let made = 0;
      for (let round = 0; made < perTurn && created.length < request.count; round++) {
        let progressed = false;
        for (const seedTask of seeds) {
          if (made >= perTurn || created.length >= request.count) break;
          const label = `${site}-${turn}-${round}-${seedTask.task_id}`;
          const count = madeFrom.get(String(seedTask.task_id)) ?? 0;
          const kinds = count % 2 === 0 ? [variation, composition] : [composition, variation];
          let picked: Candidate | undefined;
          for (const kind of kinds) if (!picked) picked = kind(seedTask, label);
          if (!picked) continue;
          const task = toTask(picked.template, picked.draft, request.firstTaskId + created.length);
          known.add(task.intent);
          created.push(task);
          madeFrom.set(String(seedTask.task_id), count + 1);
          made++;
          progressed = true;
        }
        if (!progressed) break;
      }
    }
  }
  return created;
}
