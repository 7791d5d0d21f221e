/**
 * The `webarena-verified` harness: tasks in WebArena-Verified's format (env/tasks/verified.ts), each
 * scored by the benchmark's official evaluator (./harness.ts) from the agent's JSON response and the
 * episode's network trace, recorded from its first request (./network.ts).
 */
import type { EvaluationHarness } from '../contract';
import { ensureWebArenaVerified } from './environment';
import { scoreVerified, verifiedTaskProblems } from './harness';
import { NetworkRecorder, storedHar } from './network';

export const webArenaVerifiedHarness: EvaluationHarness = {
  name: 'webarena-verified',
  taskKind: 'WebArena-Verified',
  scores: (task) => Boolean(task.verified),
  checkTask(task, options) {
    // The official evaluator resolves the task's placeholders itself, from the site URLs.
    const problems = verifiedTaskProblems(task);
    if (problems.length) return { problems };
    return { problems, evaluator: { evaluate: (_page, answer, evidence) => scoreVerified(task, options.siteUrls, answer, evidence) } };
  },
  recordEpisode(context) {
    const recorder = new NetworkRecorder(context);
    return {
      async stop() {
        const network = await recorder.stop();
        return { evidence: { network }, files: { 'network.har': storedHar(network) } };
      },
    };
  },
  unavailable: () =>
    ensureWebArenaVerified().then(
      () => undefined,
      (error: unknown) => `WebArena-Verified's evaluator is not available: ${(error as Error).message}`,
    ),
};
