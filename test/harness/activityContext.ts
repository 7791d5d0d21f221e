/**
 * Runs activity functions directly, inside the SDK's mock activity context (@temporalio/testing's
 * MockActivityEnvironment): never cancelled, heartbeats handed to `onHeartbeat`, logs dropped. One
 * environment per call, so each run's `activityInfo().activityType` names the function it runs.
 */
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';

export type ActivityRunner = <A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A) => Promise<R>;

const silent: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

export function activityRunner(onHeartbeat: (details: unknown) => void = () => {}): ActivityRunner {
  return (fn, ...args) => {
    const environment = new MockActivityEnvironment({ activityType: fn.name, taskQueue: 'test' }, { logger: silent });
    environment.on('heartbeat', onHeartbeat);
    return environment.run(fn, ...args);
  };
}
