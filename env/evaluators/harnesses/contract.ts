/**
 * What an evaluation harness is: the part that decides how a task set is checked and an episode on
 * it scored. Everything that differs between WebArena's harnesses and WebArena-Verified's sits behind
 * this contract (one folder per harness, ./registry.ts maps `harness` names to them), so no caller
 * asks which harness it has.
 */
import type { BrowserContext, Page } from 'playwright-core';
import type { ShopAdminAccount } from '../../../config/secrets';
import type { EvaluationDetails } from '../../../browser/contract';
import type { SiteUrls } from '../../siteUrls';
import type { TaskConfigError, WebArenaTask } from '../../tasks/schema';
import type { FuzzyJudge } from '../judge';
import type { HarEntry } from './verified/client';
import type { HarnessName } from './names';

/** What every harness builds a task's evaluator with. */
export interface ScoringOptions {
  siteUrls: SiteUrls;
  judge: FuzzyJudge;
  /**
   * Tasks graded by an LLM in WebArena (fuzzy_match, and ua_match for unachievable tasks) are
   * invalid unless `judge` is an LLM judge. Always so with the `webarena` harness.
   */
  requireLlmJudge?: boolean;
  /** The shop's admin account for the REST helpers (default: from the environment). */
  shopAdmin?: ShopAdminAccount;
}

/** What an episode hands its evaluator besides the final page and answer (what the harness recorded). */
export interface EpisodeEvidence {
  network?: readonly HarEntry[];
}

export interface TaskEvaluator {
  /** Scores the final `page` of an episode (in its own browser context), its `exit` answer and what was recorded of it. */
  evaluate(page: Page, answer: string | null, evidence?: EpisodeEvidence): Promise<number | { score: number; details: EvaluationDetails }>;
}

/** Every problem of a task (each naming the task and its field), and its evaluator when there is none. */
export interface TaskCheck {
  problems: TaskConfigError[];
  evaluator?: TaskEvaluator;
}

/** What a harness records of one episode, from before its first request. */
export interface EpisodeRecording {
  /** Ends the recording: the evidence for the evaluator, and files stored beside the trace (name -> text). */
  stop(): Promise<{ evidence: EpisodeEvidence; files: Record<string, string> }>;
}

export interface EvaluationHarness {
  /** The value of `harness` that picks it. */
  readonly name: HarnessName;
  /** What its tasks are called ("WebArena-Verified" tasks, in "WebArena-Verified's format"). */
  readonly taskKind: string;
  /** Whether `task` is written in the format this harness scores (a task file of another format is refused before a campaign starts). */
  scores(task: WebArenaTask): boolean;
  /** Checks a task (placeholders still unresolved) and compiles its evaluator. */
  checkTask(task: WebArenaTask, options: ScoringOptions): TaskCheck;
  /** Why every campaign under it needs `models.judge.backend: chat`, when it does (a config issue on `models.judge` otherwise). */
  readonly needsChatJudge?: string;
  /** Starts recording an episode in its browser context, when its evaluator reads more than the final page and answer. */
  recordEpisode?(context: BrowserContext): EpisodeRecording;
  /** Why it cannot score here (its tools missing), checked before a campaign starts; undefined when it can. */
  unavailable?(): Promise<string | undefined>;
}
