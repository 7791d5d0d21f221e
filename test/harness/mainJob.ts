/**
 * A tiny campaign for the main job (`webrl campaign run`) as a user runs it: a campaign file in a
 * fresh directory with the local stack's data dir and every port free, and what tests and benches do
 * to that stack from outside (SIGKILL a server, start it again).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort, isAlive } from '../../infra/processes';
import { runWebrl } from './cli';

export interface MainJobCampaign {
  configFile: string;
  dataDir: string;
  temporalPort: number;
  temporalUiPort: number;
}

export async function writeMainJobCampaign(
  dir: string,
  campaign: { name: string; seed: number; phases: number },
  options: { screenshotRate?: number } = {},
): Promise<MainJobCampaign> {
  const dataDir = join(dir, 'state');
  const [temporalPort, temporalUiPort] = [await freePort(), await freePort()];
  const config = {
    campaign: {
      ...campaign,
      phase: { tasksPerPhase: 3, rolloutShardSize: 2, rolloutShardsInFlight: 2, criticBand: [0, 1] },
      environment: { testTasks: 3, demonstrationTasks: 12, maxSteps: 6, episodeDeadlineSeconds: 120, screenshotRate: options.screenshotRate ?? 0 },
      training: { sftEpochs: 2, ormEpochs: 2, criticEpochs: 1, actorEpochs: 1, checkpointEvery: 4 },
    },
    stack: { dataDir, temporalPort, temporalUiPort, minioPort: await freePort(), minioConsolePort: await freePort() },
    concurrency: { browserContexts: 2 },
    sites: { ports: { shopping: await freePort(), shopping_admin: await freePort(), reddit: await freePort(), gitlab: await freePort() } },
  };
  const configFile = join(dir, 'campaign.json');
  await writeFile(configFile, JSON.stringify(config));
  return { configFile, dataDir, temporalPort, temporalUiPort };
}

/**
 * SIGKILLs one of the local stack's servers, leaves it down for `outageMs`, and starts it again with
 * `webrl stack up`; resolves with the time it answered again.
 */
export async function serverOutage(campaign: MainJobCampaign, service: 'temporal' | 'minio', outageMs: number): Promise<number> {
  const state = JSON.parse(await readFile(join(campaign.dataDir, 'stack.json'), 'utf8')) as Record<string, { pid: number }>;
  const pid = state[service]!.pid;
  process.kill(pid, 'SIGKILL');
  while (isAlive(pid)) await delay(50);
  await delay(outageMs);
  const up = await runWebrl(['stack', 'up', '-c', campaign.configFile]);
  if (up.code !== 0) throw new Error(`webrl stack up failed:\n${up.output}`);
  return Date.now();
}
