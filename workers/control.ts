/**
 * Worker for the control task queue: the workflows and cheap bookkeeping activities.
 * `node --import tsx workers/control.ts [campaign-file]`, or `webrl worker --queue control`.
 */
import { fileURLToPath } from 'node:url';
import { loadSettings } from '../infra/settings';
import { runWorkers } from './run';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runWorkers(await loadSettings(process.argv[2]), ['control']);
}
