/**
 * `webrl env serve`: runs the four embedded sites as standalone sites (one shared state each, a login
 * page, `POST /__webrl/reset`) and prints their URLs and accounts.
 * `webrl env tasks`: lists (or writes) the generated train / test tasks.
 * `webrl env export`: writes a split as a task file in WebArena's or WebArena-Verified's format (placeholders, oracle plans kept).
 */
import { writeFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { standaloneAccounts, startEmbeddedSites } from '../env/embeddedSites';
import { credentialVariables } from '../env/loginForms';
import { EMBEDDED_SITE_NAMES, isSiteName, WEBARENA_PORTS, type EmbeddedSiteName } from '../env/siteUrls';
import { parseSitePorts } from './flags';
import { cachedTasks, type Split } from '../env/tasks/generate';
import type { WebArenaTask } from '../env/tasks/schema';
import { toVerifiedTask } from '../env/tasks/verified';
import { DEFAULT_SEED } from '../env/world';

export function parseSeed(value: string): number {
  const seed = Number(value);
  if (!Number.isInteger(seed) || seed < 0) throw new Error(`a seed must be a non-negative integer, got ${value}`);
  return seed;
}

/** The flags that pick a split's tasks (`--split`, `--site`, `--seed`) and the file they go to. */
function taskSelection(command: Command, out: string): Command {
  return command
    .option('--split <split>', 'train or test', 'test')
    .option('--site <site>', 'only tasks on this site')
    .option('--seed <n>', 'seed of the task set', parseSeed, DEFAULT_SEED)
    .option('--out <file>', out);
}

/** The generated tasks of one split (optionally of one site), with the flags checked. */
export async function selectEmbeddedTasks(options: { split: string; site?: string; seed: number }): Promise<WebArenaTask[]> {
  if (options.split !== 'train' && options.split !== 'test') throw new Error(`--split must be train or test, got ${options.split}`);
  if (options.site !== undefined && !isSiteName(options.site)) throw new Error(`unknown site ${options.site}`);
  const tasks = await cachedTasks(options.split as Split, options.seed);
  return tasks.filter((t) => !options.site || t.sites.includes(options.site as EmbeddedSiteName));
}

/** A task as WebArena's config files carry it: logged in, with the storage state file its auto-login names. */
export function asWebArenaTask(task: WebArenaTask): WebArenaTask {
  return { ...task, require_login: true, storage_state: `./.auth/${[...task.sites].sort().join('.')}_state.json`, require_reset: task.require_reset ?? false };
}

function subcommand(program: Command, name: string, description: string): Command {
  return program.commands.find((c) => c.name() === name) ?? program.command(name).description(description);
}

export function registerEnvCommands(program: Command): void {
  const env = subcommand(program, 'env', 'the embedded web environment (shopping, shopping_admin, reddit, gitlab)');

  env
    .command('serve')
    .description('run the four embedded sites as standalone sites (login, shared state, POST /__webrl/reset) until interrupted')
    .option('--seed <n>', 'seed of the sites data', parseSeed, DEFAULT_SEED)
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--ports <pairs>', 'SITE=PORT pairs (default: the WebArena ports)', (value: string) => parseSitePorts(value, '--ports'))
    .option('--random-ports', 'let the system pick free ports')
    .action(async (options: { seed: number; host: string; ports?: Partial<Record<EmbeddedSiteName, number>>; randomPorts?: boolean }) => {
      const ports = options.randomPorts ? {} : { ...WEBARENA_PORTS, ...options.ports };
      const { accounts, generated } = standaloneAccounts(process.env);
      const log = (line: string) => console.log(`${new Date().toISOString()} ${line}`);
      const sites = await startEmbeddedSites({
        seed: options.seed,
        host: options.host,
        ports,
        portSetting: (site) => `--ports ${site}=PORT`,
        standalone: { accounts, log },
      });
      console.log(`embedded sites (seed ${sites.seed}), standalone; reset a site with POST <origin>/__webrl/reset; stop with Ctrl-C`);
      for (const name of EMBEDDED_SITE_NAMES) {
        const variables = credentialVariables(name);
        // A generated password is printed so a person can sign in; one from the environment never is.
        const password = generated.includes(name)
          ? `password ${accounts[name].password} (set ${variables.password} to choose it)`
          : `password from ${variables.password}`;
        console.log(`  ${name.padEnd(15)} ${sites.urls[name]}  user ${accounts[name].username}  ${password}`);
      }
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await sites.stop();
    });

  taskSelection(env.command('export'), 'where to write (default webarena-<split>.json, or webarena-verified-<split>.json)')
    .description("write the embedded tasks of a split as a task file in WebArena's format or WebArena-Verified's (site placeholders, oracle plans kept)")
    .addOption(new Option('--format <format>', 'the task format').choices(['webarena', 'webarena-verified']).default('webarena'))
    .action(async (options: { split: string; site?: string; seed: number; out?: string; format: 'webarena' | 'webarena-verified' }) => {
      const selected = await selectEmbeddedTasks(options);
      const tasks = options.format === 'webarena-verified' ? selected.map(toVerifiedTask) : selected.map(asWebArenaTask);
      const out = options.out ?? `${options.format}-${options.split}.json`;
      await writeFile(out, JSON.stringify(tasks, null, 1));
      console.log(
        `wrote ${tasks.length} ${options.split} tasks (seed ${options.seed}) in ${options.format === 'webarena' ? "WebArena's" : "WebArena-Verified's"} format to ${out}`,
      );
    });

  taskSelection(env.command('tasks'), 'write the (filtered) task file instead of listing')
    .description('list the generated embedded tasks of a split (WebArena format with oracle solutions)')
    .action(async (options: { split: string; site?: string; seed: number; out?: string }) => {
      const tasks = await selectEmbeddedTasks(options);
      if (options.out) {
        await writeFile(options.out, JSON.stringify(tasks, null, 1));
        console.log(`wrote ${tasks.length} tasks to ${options.out}`);
        return;
      }
      for (const t of tasks) {
        const steps = (t.oracle ?? []).filter((s) => s.action !== 'exit').length;
        console.log(
          `${String(t.task_id).padStart(5)}  ${t.sites.join('+').padEnd(14)} t${t.intent_template_id}  ${t.eval.eval_types.join('+').padEnd(24)} ${String(steps).padStart(2)} steps  ${t.intent}`,
        );
      }
      console.log(`${tasks.length} tasks (${options.split} split, seed ${options.seed}${options.site ? `, site ${options.site}` : ''})`);
    });
}
