/**
 * The one-machine worker: every task queue in one process.
 * `node --import tsx workers/allInOne.ts [campaign-file]`, or `webrl worker`.
 */
import { fileURLToPath } from 'node:url';
import { loadSettings } from '../infra/settings';
import { ALL_QUEUES, runWorkers } from './run';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runWorkers(await loadSettings(process.argv[2]), ALL_QUEUES);
}
