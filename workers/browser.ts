/**
 * Worker for the browser task queue: rollouts and evaluation (Chromium and the embedded sites; CPU hosts).
 * `node --import tsx workers/browser.ts [campaign-file]`, or `webrl worker --queue browser`.
 */
import { fileURLToPath } from 'node:url';
import { loadSettings } from '../infra/settings';
import { runWorkers } from './run';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runWorkers(await loadSettings(process.argv[2]), ['browser']);
}
