/**
 * The chat task generator (models.taskGenerator.backend: chat), the curriculum's in-breadth
 * evolution over a chat model.
 */
import type { z } from 'zod';
import type { EnvironmentTask } from '../../../env/backends/contract';
import { Rng } from '../../../env/random';
import { webArenaTaskSchema } from '../../../env/tasks/schema';
import type { settings as chat } from './settings';
import type { ChatOptions } from '../../remote/chatText';
import { generateTasksWithLlm, type GenerationFailure, type SiteSeeds } from '../../remote/taskGeneration';
import type { GenerationRequest, TaskGenerator } from '../roles';

type ChatGenerator = z.output<typeof chat.taskGenerator>;

const normaliseIntent = (intent: string) =>
  intent
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/**
 * In-breadth evolution over a chat model: the failed tasks seed their sites, the replies become
 * WebArena tasks with this phase's numeric ids, and anything already known (splits, earlier phases,
 * another site's reply) is dropped. Generated tasks carry an evaluator only when the model wrote a
 * valid one; the ORM rewards their rollouts either way.
 */
async function generateWithChat(
  generator: ChatGenerator,
  chat: ChatOptions,
  request: GenerationRequest,
): Promise<{ tasks: EnvironmentTask[]; duplicates: string[]; failures: GenerationFailure[] }> {
  const bySite = new Map<string, EnvironmentTask[]>();
  for (const task of request.failed) {
    const site = task.sites[0] ?? 'unknown';
    bySite.set(site, [...(bySite.get(site) ?? []), task]);
  }
  const sites: SiteSeeds[] = [...bySite.keys()].sort().map((site) => ({
    site,
    seeds: new Rng(request.seed).fork(`seeds-${site}`).sample(bySite.get(site)!, Math.min(generator.seedsPerSite, bySite.get(site)!.length)),
  }));
  if (sites.length === 0 || request.count <= 0) return { tasks: [], duplicates: [], failures: [] };
  const result = await generateTasksWithLlm(sites, {
    ...chat,
    idPrefix: request.label,
    turns: generator.turns,
    tasksPerTurn: generator.tasksPerTurn,
    temperature: generator.temperature,
    seed: request.seed,
  });
  const seen = new Set([...request.known].map(normaliseIntent));
  const tasks: EnvironmentTask[] = [];
  const duplicates: string[] = [];
  for (const generated of result.tasks) {
    if (tasks.length >= request.count) break;
    const key = normaliseIntent(generated.intent);
    if (seen.has(key)) {
      duplicates.push(generated.intent);
      continue;
    }
    seen.add(key);
    const parsed = webArenaTaskSchema.safeParse({ ...generated, task_id: request.firstTaskId + tasks.length, generated_id: generated.task_id });
    // The model's evaluator is kept only when it is a valid WebArena one (its own schema is looser).
    const task = parsed.success
      ? parsed.data
      : ({ ...generated, task_id: request.firstTaskId + tasks.length, generated_id: generated.task_id, eval: undefined } as unknown as EnvironmentTask);
    if (!parsed.success) delete (task as { eval?: unknown }).eval;
    tasks.push(task);
  }
  return { tasks, duplicates, failures: result.failures };
}

/** `chat` gives the endpoint's options (with the key and the running activity's cancellation) per call. */
export function createChatTaskGenerator(generator: ChatGenerator, chat: () => ChatOptions): TaskGenerator {
  return {
    model: generator.model,
    fillWithEmbedded: generator.fillWithEmbedded,
    generate: (request) => generateWithChat(generator, chat(), request),
  };
}
