/**
 * Timer heartbeats (activities/heartbeats.ts): an activity beats while a long step sends nothing of its
 * own, each beat carrying the progress it last reported, so a loaded machine never looks like a dead worker.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { heartbeat, timerHeartbeats, withHeartbeats } from '../activities/heartbeats';

/**
 * Runs `work` as an activity under the worker's interceptor; `silentStep()` is a step that sends no
 * heartbeat and ends once `beats` heartbeats came during it. Returns every heartbeat's details.
 */
async function heartbeatsOf(beats: number, work: (silentStep: () => Promise<void>) => Promise<void>): Promise<{ all: unknown[]; during: unknown[] }> {
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 400 }, { interceptors: [timerHeartbeats] });
  const all: unknown[] = [];
  let from: number | undefined;
  let release: () => void = () => undefined;
  env.on('heartbeat', (details: unknown) => {
    all.push(details);
    if (from !== undefined && all.length - from >= beats) release();
  });
  await env.run(() =>
    work(() => {
      from = all.length;
      return new Promise<void>((resolve) => (release = resolve));
    }),
  );
  return { all, during: all.slice(from) };
}

test('a long step that sends no heartbeat of its own is covered by the timer, which repeats the last progress', { timeout: 30_000 }, async () => {
  const { all, during } = await heartbeatsOf(3, async (silentStep) => {
    heartbeat({ step: 1 });
    await silentStep();
  });
  assert.deepEqual(during, [{ step: 1 }, { step: 1 }, { step: 1 }]);
  assert.deepEqual(all[0], { step: 1 });
});

test('under withHeartbeats the timer reads the progress as it changes', { timeout: 30_000 }, async () => {
  let done = 0;
  const { all, during } = await heartbeatsOf(2, (silentStep) =>
    withHeartbeats(
      () => ({ done }),
      (async () => {
        await Promise.resolve();
        done = 5;
        await silentStep();
      })(),
    ),
  );
  assert.deepEqual(all[0], { done: 0 });
  assert.deepEqual(during, [{ done: 5 }, { done: 5 }]);
});
