/**
 * Worker for the train task queue: ORM scoring and training (GPU hosts at scale).
 * `node --import tsx workers/train.ts [campaign-file]`, or `webrl worker --queue train`.
 */
import { fileURLToPath } from 'node:url';
import { loadSettings } from '../infra/settings';
import { runWorkers } from './run';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runWorkers(await loadSettings(process.argv[2]), ['train']);
}
