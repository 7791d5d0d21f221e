/**
 * The campaign's critic served on this machine (a laptop's LLM path, tests, benchmarks):
 *
 *   python -m webrl_torch.cli serve-critic --base-model DIR --checkpoints ROOT --host H --port P
 *
 * from the trainer's Python environment (trainers/torch/environment.ts). It starts with no critic: each
 * request of the `served` critic backend names the checkpoint it wants under ROOT (the directory the
 * workers sync each phase's critic into), and the server loads it in place of the one it holds, so the
 * filter of every phase values with the critic the phase before trained. Ready when GET /health answers.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { exited, freePort, httpOk, spawnService, waitUntil } from './processes';

export interface CriticServerOptions {
  /** The trainer environment's Python (it imports webrl_torch). */
  python: string;
  /** The model the critics were trained on (the trainer's --base-model). */
  baseModel: string;
  /** The directory requests name their critics under (models.critic.sharedDir). */
  checkpoints: string;
  host?: string;
  /** Default: a free port. */
  port?: number;
  /** The base weights' dtype (serve-critic's --dtype; default auto). */
  dtype?: 'auto' | 'float32' | 'bfloat16';
  logFile: string;
  /** Default 2 minutes (it loads only the tokenizer before listening). */
  readyTimeoutMs?: number;
}

export interface RunningCriticServer {
  /** e.g. http://127.0.0.1:8100 (models.critic.baseUrl) */
  baseUrl: string;
  port: number;
  /** SIGTERM, SIGKILL after a grace period; resolves once it is gone. */
  stop(): Promise<void>;
}

export async function startCriticServer(options: CriticServerOptions): Promise<RunningCriticServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? (await freePort(host));
  const args = ['-m', 'webrl_torch.cli', 'serve-critic', '--base-model', options.baseModel, '--checkpoints', options.checkpoints];
  args.push('--host', host, '--port', String(port), '--dtype', options.dtype ?? 'auto');
  const child = await spawnService({
    name: 'serve-critic',
    command: options.python,
    args,
    // No hub here: the model is a local directory.
    env: { HF_HUB_OFFLINE: '1' },
    logFile: options.logFile,
    detached: false,
  });
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  const stop = async () => {
    child.kill('SIGTERM');
    const deadline = Date.now() + 10_000;
    while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) await delay(50);
    child.kill('SIGKILL');
    await exited(child);
    process.removeListener('exit', onExit);
  };
  const baseUrl = `http://${host}:${port}`;
  try {
    await waitUntil(`serve-critic on ${baseUrl}`, () => httpOk(`${baseUrl}/health`), {
      timeoutMs: options.readyTimeoutMs ?? 120_000,
      child,
      logFile: options.logFile,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { baseUrl, port, stop };
}
