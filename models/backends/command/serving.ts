/** Serving by the user's deploy command: it runs with {checkpoint} (a local copy), {name} and {role}; then the server is polled until it lists the name. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { z } from 'zod';
import type { ModelSecrets } from '../../../config/secrets';
import { syncCheckpoint } from '../../../storage/checkpoints';
import { splitCommand } from '../../remote/externalTrainer';
import { listServedModels } from '../../remote/modelServer';
import type { Heartbeats, RoleStorage } from '../contract';
import type { ActorServing, ServedModelRecord } from '../roles';
import { refuse, serverOptions, waitUntilListed } from '../serving';
import type { settings } from './settings';

type CommandServing = z.output<typeof settings.serving>;

const execFileAsync = promisify(execFile);

/** The user's deploy command, run with {checkpoint} (a local copy), {name} and {role}; then the server is polled until it lists the name. */
export function commandServing(storage: RoleStorage, serving: CommandServing, secrets: ModelSecrets, heartbeats: Heartbeats): ActorServing {
  const server = serverOptions(serving, secrets);
  return {
    async deploy(planned) {
      const record: ServedModelRecord = { ...planned, backend: 'command' };
      const listed = (await listServedModels(server).catch(() => [])).some((model) => model.id === record.name);
      if (!listed) {
        const dir = join(storage.localRoot('cache'), 'serving', record.checkpoint);
        await syncCheckpoint(storage.store, record.checkpoint, dir);
        const values: Record<string, string> = { checkpoint: dir, name: record.name, role: record.role };
        const [program, ...args] = splitCommand(serving.command).map((arg) => arg.replace(/\{(checkpoint|name|role)\}/g, (_, key: string) => values[key]!));
        try {
          await execFileAsync(program!, args, { timeout: serving.timeoutSeconds * 1000, maxBuffer: 16 * 1024 * 1024 });
        } catch (error) {
          const failure = error as { code?: unknown; stderr?: string; stdout?: string; message: string };
          const tail = `${failure.stdout ?? ''}${failure.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n');
          refuse(
            `the deploy command for ${record.name} failed (${typeof failure.code === 'number' ? `exit code ${failure.code}` : failure.message}); last lines:\n${tail}`,
          );
        }
      }
      await waitUntilListed(server, record.name, serving.timeoutSeconds * 1000, serving.pollMs, heartbeats);
      return record;
    },

    async ready(record) {
      return record.name;
    },
  };
}
