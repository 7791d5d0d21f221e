/**
 * The embedded task generator of the self-evolving curriculum (WebRL's "in-breadth evolving"): from
 * tasks the actor failed, new tasks on the same site, by instantiating the failed task's template with
 * slot values it has not been asked with before. Per site, up to 10 failed seeds are sampled per
 * generation turn, 2 turns per site, as in the paper. Held-out (test-only) templates and every intent
 * already seen (train, test, earlier phases) are never generated, so the test split stays held out.
 * Deterministic for (seed, failed tasks, known intents).
 */
import { Rng } from '../random';
import { buildWorld, freshStates } from '../world';
import { TEMPLATES, toTask } from './generate';
import type { WebArenaTask } from './schema';
import { renderIntent, type TaskDraft, type TaskTemplate } from './template';

export const SEEDS_PER_TURN = 10;
export const TURNS_PER_SITE = 2;

export interface EvolveRequest {
  failed: readonly WebArenaTask[];
  /** Intents that must not be generated again (train, test, earlier generated tasks). */
  knownIntents: ReadonlySet<string>;
  count: number;
  seed: number;
  worldSeed: number;
  /** Ids of the new tasks count up from here. */
  firstTaskId: number;
}

/** Every instantiation of a template, drawn exactly as the task splits draw them. */
function draftsOf(template: TaskTemplate, worldSeed: number, world: ReturnType<typeof buildWorld>): TaskDraft[] {
  const rng = new Rng(worldSeed).fork('tasks').fork(`template-${template.id}`);
  return template.drafts({ world, fresh: freshStates(world), rng: rng.fork('drafts') });
}

export function evolveTasks(request: EvolveRequest): WebArenaTask[] {
  const templates = new Map(TEMPLATES.filter((t) => !t.heldOut).map((t) => [t.id, t]));
  const bySite = new Map<string, WebArenaTask[]>();
  for (const task of request.failed) {
    if (task.intent_template_id === undefined || !templates.has(task.intent_template_id)) continue;
    const site = task.sites[0] ?? 'unknown';
    bySite.set(site, [...(bySite.get(site) ?? []), task]);
  }
  if (bySite.size === 0 || request.count <= 0) return [];

  const world = buildWorld(request.worldSeed);
  const drafts = new Map<number, TaskDraft[]>();
  const known = new Set(request.knownIntents);
  const rng = new Rng(request.seed).fork('evolve');
  const sites = [...bySite.keys()].sort();
  // Sites share the budget evenly; a site that runs out of fresh variants leaves its share to others.
  const perTurn = Math.max(1, Math.ceil(request.count / (sites.length * TURNS_PER_SITE)));
  const created: WebArenaTask[] = [];

  for (let turn = 0; turn < TURNS_PER_SITE && created.length < request.count; turn++) {
    for (const site of sites) {
      const seeds = rng.fork(`${site}-${turn}`).sample(bySite.get(site)!, SEEDS_PER_TURN);
      let made = 0;
      for (let round = 0; made < perTurn && created.length < request.count; round++) {
        let progressed = false;
        for (const seedTask of seeds) {
          if (made >= perTurn || created.length >= request.count) break;
          const template = templates.get(seedTask.intent_template_id!)!;
          if (!drafts.has(template.id)) drafts.set(template.id, draftsOf(template, request.worldSeed, world));
          const fresh = drafts.get(template.id)!.filter((d) => !known.has(renderIntent(template.intent, d.params)));
          if (fresh.length === 0) continue;
          const draft = rng.fork(`${site}-${turn}-${round}-${seedTask.task_id}`).pick(fresh);
          const task = toTask(template, draft, request.firstTaskId + created.length);
          known.add(task.intent);
          created.push(task);
          made++;
          progressed = true;
        }
        if (!progressed) break;
      }
    }
  }
  return created;
}
