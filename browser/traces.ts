/**
 * Trajectory traces (webrl.md §5): one JSONL stream per trajectory, one row per step, in WebRL's shape
 * `trace_id, index, prompt, html, response, target`, plus this project's fields. As in WebRL, `prompt` is
 * the round's stand-in for its observation in later prompts (the intent at index 0, then
 * `** Simplified html **`), `html` the observation, `response` the raw model output, `target` the
 * intent; the full completion prompt is `model_prompt`. Episode-level results (score, answer, reason,
 * infrastructure failure) are repeated on every row, and the last row has `final: true`.
 *
 * Beside the traces, a sink may write WebRL's score file `actions/<trace file name>.json`
 * ({@link ScoreRecord}): WebRL's scripts/process_data.py reads `score` from it for every trace and
 * stops without it.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { once } from 'node:events';
import { z } from 'zod';
import type { Action } from './contract';
import type { EpisodeOutcome, EpisodeStep } from './episodeRecord';
import type { ParseError } from './grammar';
import { pastObservation } from './policies/prompt';

/** The six fields the published WebRL tooling reads and writes. */
export interface WebrlTraceRow {
  trace_id: string;
  index: number;
  prompt: string;
  html: string;
  response: string;
  target: string;
}

export interface TraceRow extends WebrlTraceRow {
  task_id: string | number;
  url: string;
  model_prompt: string;
  /** Characters cut from the end of the observation in model_prompt (policies that keep a budget). */
  observation_cut?: number;
  action: Action | null;
  parse_error: ParseError | null;
  execution: { ok: boolean; error?: string } | null;
  timings: { observe_ms: number; policy_ms: number; action_ms: number; settle_ms: number };
  /** Key of the step's screenshot, when screenshots were taken. */
  screenshot?: string;
  score: number;
  answer: string | null;
  reason: string;
  infra_failure: boolean;
  final: boolean;
}

/** WebRL's `actions/<trace_id>.json`: `score` is what its scripts read; the rest says where it came from. */
export interface ScoreRecord {
  trace_id: string;
  task_id: string | number;
  score: number;
  /** The raw model outputs, one per step. */
  actions: string[];
}

export function toScoreRecord(traceId: string, steps: readonly EpisodeStep[], outcome: EpisodeOutcome): ScoreRecord {
  return { trace_id: traceId, task_id: outcome.taskId, score: outcome.score, actions: steps.map((step) => step.response) };
}

/** Where trajectories go: a local directory here; object storage (S3) in the cluster. */
export interface TraceSink {
  writeTrajectory(traceId: string, rows: AsyncIterable<object> | Iterable<object>): Promise<{ key: string }>;
  /** Optional: writes WebRL's score file for the trajectory (sinks given a place for it). */
  writeScore?(traceId: string, record: ScoreRecord): Promise<{ key: string }>;
  /** Optional: stores a step's PNG screenshot; without it screenshots are not taken. */
  writeScreenshot?(traceId: string, index: number, png: Uint8Array): Promise<{ key: string }>;
  /** Optional: stores a file the evaluator handed back (the network trace) beside the trajectory. */
  writeFile?(traceId: string, name: string, text: string): Promise<{ key: string }>;
}

const round = (ms: number) => Math.round(ms * 10) / 10;

export function toTraceRows(traceId: string, intent: string, steps: readonly EpisodeStep[], outcome: EpisodeOutcome): TraceRow[] {
  return steps.map((step, i) => ({
    trace_id: traceId,
    index: step.index,
    prompt: pastObservation(step.index, intent),
    html: step.html,
    response: step.response,
    target: intent,
    task_id: outcome.taskId,
    url: step.url,
    model_prompt: step.prompt,
    ...(step.observationCut === undefined ? {} : { observation_cut: step.observationCut }),
    action: step.action,
    parse_error: step.parseError,
    execution: step.execution,
    timings: {
      observe_ms: round(step.timings.observeMs),
      policy_ms: round(step.timings.policyMs),
      action_ms: round(step.timings.actionMs),
      settle_ms: round(step.timings.settleMs),
    },
    ...(step.screenshot === undefined ? {} : { screenshot: step.screenshot }),
    score: outcome.score,
    ...(outcome.evaluation === undefined ? {} : { evaluation: outcome.evaluation }),
    ...(outcome.files === undefined ? {} : { files: outcome.files }),
    answer: outcome.answer,
    reason: outcome.reason,
    infra_failure: outcome.infraFailure,
    final: i === steps.length - 1,
  }));
}

/** File-system-safe name for a trace id (the trace file's name, so WebRL finds its score file by it). */
function fileName(traceId: string): string {
  return traceId.replace(/[^\w.-]/g, '_');
}

/**
 * Writes `<dir>/<traceId>.jsonl` (atomically: a temporary file renamed into place) and, given
 * `actionsDir`, WebRL's score file `<actionsDir>/<traceId>.json`.
 */
export class LocalTraceSink implements TraceSink {
  constructor(
    readonly dir: string,
    readonly actionsDir?: string,
  ) {
    if (actionsDir !== undefined) this.writeScore = (traceId, record) => this.writeScoreFile(actionsDir, traceId, record);
  }

  writeScore?: (traceId: string, record: ScoreRecord) => Promise<{ key: string }>;

  private async writeScoreFile(actionsDir: string, traceId: string, record: ScoreRecord): Promise<{ key: string }> {
    const key = `${fileName(traceId)}.json`;
    const path = join(actionsDir, key);
    const temporary = `${path}.${process.pid}.tmp`;
    await mkdir(actionsDir, { recursive: true });
    await writeFile(temporary, `${JSON.stringify(record)}\n`);
    await rename(temporary, path);
    return { key };
  }

  async writeTrajectory(traceId: string, rows: AsyncIterable<object> | Iterable<object>): Promise<{ key: string }> {
    const key = `${fileName(traceId)}.jsonl`;
    const path = join(this.dir, key);
    const temporary = `${path}.${process.pid}.tmp`;
    await mkdir(dirname(path), { recursive: true });
    const out = createWriteStream(temporary);
    try {
      for await (const row of rows) {
        if (!out.write(`${JSON.stringify(row)}\n`)) await once(out, 'drain');
      }
    } finally {
      out.end();
      await once(out, 'close');
    }
    await rename(temporary, path);
    return { key };
  }

  async writeScreenshot(traceId: string, index: number, png: Uint8Array): Promise<{ key: string }> {
    const key = `${fileName(traceId)}/step-${index}.png`;
    await mkdir(join(this.dir, fileName(traceId)), { recursive: true });
    await writeFile(join(this.dir, key), png);
    return { key };
  }

  async writeFile(traceId: string, name: string, text: string): Promise<{ key: string }> {
    const key = `${fileName(traceId)}/${fileName(name)}`;
    await mkdir(join(this.dir, fileName(traceId)), { recursive: true });
    await writeFile(join(this.dir, key), text);
    return { key };
  }
}

const webrlRow = z.looseObject({
  // WebRL writes the task id here, which may be a number.
  trace_id: z.union([z.string(), z.number()]).transform(String),
  index: z.number().int().nonnegative(),
  prompt: z.string(),
  html: z.string(),
  response: z.string(),
  target: z.string(),
});

/** A row read back: the six WebRL fields checked; this project's fields, when present, passed through. */
export type ReadTraceRow = WebrlTraceRow & Partial<Omit<TraceRow, keyof WebrlTraceRow>>;

/** Parses a JSONL trace, ours or a plain WebRL one; throws naming the first bad line. */
export function parseTraceJsonl(text: string): ReadTraceRow[] {
  const rows: ReadTraceRow[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      throw new Error(`trace line ${i + 1} is not JSON: ${(error as Error).message}`);
    }
    const parsed = webrlRow.safeParse(json);
    if (!parsed.success) throw new Error(`trace line ${i + 1} is not a WebRL trace row: ${z.prettifyError(parsed.error)}`);
    rows.push(parsed.data as ReadTraceRow);
  });
  return rows;
}

export async function readTraceFile(path: string): Promise<ReadTraceRow[]> {
  return parseTraceJsonl(await readFile(path, 'utf8'));
}
