/**
 * The miniwob backend: MiniWoB++'s task pages (PyPI `miniwob` 1.1.0, read from its wheel cached under
 * the data dir), served by each browser worker; a task is a task type and a seed; the page's own
 * reward scores each episode (docs/miniwob.md).
 */
import { DeterministicJudge } from '../../evaluators/judge';
import { type EnvironmentBackend, type EnvironmentTask, type Split, withOraclePlans } from '../contract';
import { serveDirectory, type StaticServer } from '../../../browser/staticServer';
import { MiniwobEnvironment } from './environment';
import { parseMiniwobTaskId } from './episode';
import { evolveMiniwobTasks } from './evolve';
import { ensureMiniwobPages } from './package';
import { miniwobConfigIssues, miniwobSettings, type MiniwobSettings } from './settings';
import { loadMiniwobTasks, splitRefs, taskTypesOf, timeLimitMsOf } from './tasks';
import { ensureChromium } from '../../../infra/tools';

/** Its member of `campaign.environment`. */
export { miniwobSettings as settings };

const loaded = new Map<string, Promise<EnvironmentTask[]>>();
/** The splits this process has finished loading, by key (what the synchronous `evolve` draws from). */
const ready = new Map<string, EnvironmentTask[]>();

function splitKey(settings: MiniwobSettings, split: Split): string {
  return `miniwob:${JSON.stringify({ types: taskTypesOf(settings), seeds: settings.miniwob.seeds[split], timeLimit: settings.miniwob.timeLimit })}`;
}

/** A split's tasks (loaded once per process and key: every page is opened once to read its instruction). */
export function miniwobSplit(settings: MiniwobSettings, split: Split): Promise<EnvironmentTask[]> {
  const key = splitKey(settings, split);
  let tasks = loaded.get(key);
  if (!tasks) {
    tasks = loadMiniwobTasks(splitRefs(settings, split), timeLimitMsOf(settings));
    loaded.set(key, tasks);
    tasks.then(
      (done) => ready.set(key, done),
      () => loaded.delete(key),
    );
  }
  return tasks;
}

export const backend: EnvironmentBackend<typeof miniwobSettings> = {
  name: 'miniwob',
  settings: miniwobSettings,
  configIssues: miniwobConfigIssues,
  tasks: {
    key: splitKey,
    load: (settings, split) => miniwobSplit(settings, split),
  },
  // The page scores the episode; the judge is never asked (the ORM rewards rollouts as on any backend).
  scoring: () => ({ judge: new DeterministicJudge(), harness: 'webarena-lite' }),
  async open(workers, _services, settings) {
    const pages = await ensureMiniwobPages();
    const server = await workers.shared<Promise<StaticServer>>(`miniwob:server:${pages.root}`, () => serveDirectory(pages.root));
    return { environment: new MiniwobEnvironment({ root: pages.root, baseUrl: server.url, timeLimitMs: timeLimitMsOf(settings) }), siteUrls: {} };
  },
  oracle: { demonstrable: withOraclePlans },
  taskType: (taskId) => parseMiniwobTaskId(taskId)?.type,
  // New tasks are train instances of the types the actor failed (evolve.ts); the campaign control has
  // loaded the train split (through `tasks.load`) before it asks for them.
  evolve(settings, request) {
    const train = ready.get(splitKey(settings, 'train'));
    if (!train) throw new Error('the miniwob curriculum draws from the train split, which this process has not loaded (load it through the task source first)');
    return evolveMiniwobTasks({ types: taskTypesOf(settings), seeds: settings.miniwob.seeds.train, train, request });
  },
  async check() {
    const problems: string[] = [];
    await ensureMiniwobPages().catch((error: Error) => problems.push(error.message));
    await ensureChromium().catch((error: Error) => problems.push(error.message));
    return problems;
  },
  checkSubject: 'miniwob pages',
};
