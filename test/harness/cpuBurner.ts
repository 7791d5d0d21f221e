/**
 * A bounded CPU burner for load tests and benchmarks: one worker thread per core spinning until it is
 * stopped, or until `maxMs` passes should its owner never stop it (a failed test), so nothing of it
 * outlives what it loads.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

const SPIN = `
const { workerData } = require('node:worker_threads');
const stop = new Int32Array(workerData.stop);
const until = Date.now() + workerData.maxMs;
let x = 0;
while (Atomics.load(stop, 0) === 0 && Date.now() < until) for (let i = 0; i < 100000; i++) x = (x * 31 + i) | 0;
`;

export interface CpuBurner {
  threads: number;
  stop(): Promise<void>;
}

export function startCpuBurner(options: { threads?: number; maxMs?: number } = {}): CpuBurner {
  const threads = options.threads ?? availableParallelism();
  const stop = new SharedArrayBuffer(4);
  const workers = Array.from({ length: threads }, () => new Worker(SPIN, { eval: true, workerData: { stop, maxMs: options.maxMs ?? 15 * 60_000 } }));
  const exited = workers.map((worker) => new Promise<void>((resolve) => worker.once('exit', () => resolve())));
  // A burner never keeps its process alive.
  for (const worker of workers) worker.unref();
  return {
    threads,
    async stop() {
      Atomics.store(new Int32Array(stop), 0, 1);
      await Promise.all(exited);
    },
  };
}
