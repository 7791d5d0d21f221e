/**
 * The one contract between the browser side (observation, grammar, executor, episode loop) and the
 * environments it runs on (embedded sites, real WebArena sites). BrowserGym-style: observation in,
 * action out, reward from the environment's evaluator.
 */
import type { BrowserContext, Page } from 'playwright-core';

/** One clickable element of the annotated page; `id` is the number the model refers to. */
export interface ObservedElement {
  id: number;
  tag: string;
  role?: string;
  /** The element's own (direct) text, whitespace-collapsed. */
  text: string;
  /** All text inside the element (its own and its descendants'), whitespace-collapsed, cut at 500 chars. */
  fullText?: string;
  /** Raw attributes of the element (all of them, not just the ones printed in the observation). */
  attributes: Record<string, string>;
  /** Viewport box: left, top, width, height (integers, CSS pixels). */
  bbox: [number, number, number, number];
  value?: string;
  checked?: boolean;
  selectedOption?: string;
  /** The option texts of a `<select>`, in order. */
  options?: string[];
}

export interface Observation {
  url: string;
  title: string;
  /** The one-line simplified HTML the model reads (WebRL text setting). */
  html: string;
  elements: ObservedElement[];
}

/** A parsed WebRL action. Element ids are the integers of the observation. */
export type Action =
  | { kind: 'Click'; element: number }
  | { kind: 'Hover'; element: number }
  | { kind: 'Type'; element: number; argument: string }
  | { kind: 'Search'; element: number; argument: string }
  | { kind: 'Select Dropdown Option'; element: number; argument: string }
  | { kind: 'Scroll Up' }
  | { kind: 'Scroll Down' }
  | { kind: 'Press Enter' }
  | { kind: 'Go Backward' }
  | { kind: 'Go Forward' }
  | { kind: 'exit'; message: string };

/**
 * How an oracle plan names an element without knowing the ids the annotation will assign:
 * every given field must match; `nth` picks among matches in document order (default 0).
 */
export interface ElementMatcher {
  tag?: string;
  text?: string;
  textIncludes?: string;
  /** A regular expression the full text matches (an option that ends with given letters). */
  textMatches?: string;
  attributes?: Record<string, string>;
  /** Only elements printed after the observation's first text run equal to this text (the link after "Address:"). */
  after?: string;
  /** The name the observation prints for an element without text (an icon's `data-label`, or `title` in the webrl profile). */
  label?: string;
  /** Only elements without a `disabled` attribute. */
  enabled?: boolean;
  nth?: number;
}

/**
 * One step of an oracle solution; the oracle policy resolves `target` to an id at run time
 * (browser/policies/oraclePlan.ts). A step with `until` is taken again each round until that matcher finds
 * an element (not at all when it already does); `argumentFrom` is a regular expression over the page's
 * text whose first group replaces `$1` in the argument.
 */
export type OracleStep =
  | { action: 'Click' | 'Hover'; target: ElementMatcher; until?: ElementMatcher }
  | { action: 'Type' | 'Search' | 'Select Dropdown Option'; target: ElementMatcher; argument: string; argumentFrom?: string }
  | { action: 'Scroll Up' | 'Scroll Down' | 'Press Enter' | 'Go Backward' | 'Go Forward'; until?: ElementMatcher }
  | { action: 'exit'; message: string }
  /** From this round on, the step solver registered under this name picks each step from the current page (browser/policies/oracle.ts). */
  | { action: 'solve'; solver: string };

/** The part of a WebArena-format task the episode loop needs. */
export interface EpisodeTask {
  task_id: number | string;
  intent: string;
  /** Already resolved (no `__SHOPPING__` placeholders); the first URL of an ` |AND| ` list. */
  start_url: string;
}

/** What an environment does around one episode: isolated state in, a score out. */
export interface EpisodeEnvironment {
  /** Gives the episode its own state (cookies, namespace) in a fresh context; returns the start URL. */
  prepareEpisode(context: BrowserContext, task: EpisodeTask): Promise<PreparedEpisode>;
  /**
   * Optional: waits until the task's sites may take one more episode (shared sites cap their
   * episodes, and may be reset first), before the episode takes a browser slot and outside its step
   * timeouts. Returns the release, called once the episode is over.
   */
  reserve?(task: EpisodeTask): Promise<() => void>;
}

/** What an evaluator reports beside the score (MiniWoB++: the page's raw reward), kept in the trace. */
export type EvaluationDetails = Record<string, string | number | boolean | null>;

/** A score with what the evaluator saw, and files to store beside the trace (name -> text; WebArena-Verified: `network.har`). */
export interface ScoredEpisode {
  score: number;
  details: EvaluationDetails;
  files?: Record<string, string>;
}

export interface PreparedEpisode {
  startUrl: string;
  /**
   * Scores the finished episode on its final page with the last `exit` message (null if none): the
   * score, or the score with what the evaluator saw.
   */
  evaluate(page: Page, answer: string | null): Promise<number | ScoredEpisode>;
  /**
   * Optional: whether the environment has ended the episode on `page` (MiniWoB++: the page's own end of
   * episode, at the first decisive action). Asked after every executed action; once it answers true the
   * episode stops there and is evaluated, so nothing after the end is a step. Without it, only the agent
   * (exit) or the episode's limits end an episode (WebArena's convention, kept by the embedded and
   * webarena backends).
   */
  ended?(page: Page): Promise<boolean>;
  /** Drops the episode's state; called once, after evaluate. */
  dispose(): Promise<void>;
}
