/**
 * WebArena's two harnesses over task files in WebArena's format (./rules.ts): `webarena-lite`
 * (WebArena-Lite's rules, the default) and `webarena` (the original benchmark's, whose fuzzy_match
 * and ua_match always ask an LLM judge).
 */
import type { Harness } from '../../textMatch';
import type { EvaluationHarness } from '../contract';
import { checkWebArenaTask, HARNESS_RULES } from './rules';

const CHAT_JUDGE_NEEDED =
  'the original WebArena harness grades fuzzy_match and ua_match with an LLM: set models.judge.backend: chat (or harness: webarena-lite)';

function webArenaHarness(name: Harness): EvaluationHarness {
  return {
    name,
    taskKind: 'WebArena',
    // A task converted from WebArena-Verified's format is that harness's.
    scores: (task) => !task.verified,
    checkTask: (task, options) => checkWebArenaTask(task, options, name),
    ...(HARNESS_RULES[name].alwaysNeedsLlmJudge ? { needsChatJudge: CHAT_JUDGE_NEEDED } : {}),
  };
}

export const webArenaLiteHarness = webArenaHarness('webarena-lite');
export const webArenaOriginalHarness = webArenaHarness('webarena');
