/**
 * Workers in their own process, as `webrl worker` runs them, for the crash tests: started from a config
 * file, and SIGKILLed (process group, Chromium included) at a chosen moment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import type { Config } from '../../config/campaignConfig';
import { exited } from '../../infra/processes';
import type { TestStack } from './stack';

const WEBRL = fileURLToPath(new URL('../../bin/webrl.js', import.meta.url));
const MINUTES = 60_000;

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20 * MINUTES): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await delay(200);
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function writeConfigFile(stack: TestStack, config: Config, label: string): Promise<string> {
  const file = join(stack.dir, `${label}.json`);
  await writeFile(file, JSON.stringify(config));
  return file;
}

/** An all-in-one worker in its own process group (its Chromium included), as `webrl worker` runs it. */
export function startWorkerProcess(stack: TestStack, configFile: string, label: string): ChildProcess {
  const log = openSync(join(stack.dir, `worker-${label}.log`), 'a');
  const child = spawn(process.execPath, [WEBRL, 'worker', '-c', configFile], {
    env: { ...process.env, ...stack.env },
    stdio: ['ignore', log, log],
    detached: true,
  });
  closeSync(log);
  return child;
}

/**
 * SIGKILLs the worker's whole process group at a moment when `midway` holds. The group is frozen
 * first (SIGSTOP) and `midway` checked again, so the kill provably lands inside the work, not after it.
 */
export async function killWorkerMidway(worker: ChildProcess, what: string, midway: () => Promise<boolean>): Promise<void> {
  const group = -worker.pid!;
  await waitFor(what, async () => {
    if (!(await midway())) return undefined;
    process.kill(group, 'SIGSTOP');
    let inside = false;
    try {
      inside = await midway();
    } finally {
      if (!inside) process.kill(group, 'SIGCONT');
    }
    return inside ? true : undefined;
  });
  process.kill(group, 'SIGKILL');
  await exited(worker);
}
