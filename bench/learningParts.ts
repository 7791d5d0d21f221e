/**
 * bench:learning in parts. Each campaign seed and the zero-shot run is a part; a finished part's
 * held-out scores are kept as a file (`seed-1.json`, `seed-2.json`, `zero-shot.json`) in the bench's
 * results folder. The parts can then run at different times or on different machines (a seed a
 * machine, the files copied into one folder), and the figures are computed once every part is there.
 * A file records what produced it: the settings every part must share (refused when they differ) and
 * the commit (reported, since a later commit may change nothing the run measures).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeAtomically } from '../models/checkpoint';
import type { SeedRun } from './learningFigures';

const ScoredTaskSchema = z.object({ taskId: z.string(), score: z.number().min(0).max(1) });

export const LearningPartSchema = z.object({
  part: z.string().regex(/^(seed-\d+|zero-shot)$/),
  /** sha256 of the settings the parts must share: the example file and the size's overrides. */
  settings: z.string().regex(/^[0-9a-f]{64}$/),
  /** The commit the part ran at (`-dirty` when the working tree had changes), or `unknown` outside git. */
  commit: z.string(),
  seconds: z.number().nonnegative(),
  /** A seed's evaluations: phase 0 (SFT), then each RL phase. */
  phases: z.array(z.array(ScoredTaskSchema)).optional(),
  /** The zero-shot run's scores. */
  zeroShot: z.array(ScoredTaskSchema).optional(),
});
export type LearningPart = z.infer<typeof LearningPartSchema>;

export const seedPart = (seed: number) => `seed-${seed}`;
export const ZERO_SHOT_PART = 'zero-shot';

/** The fingerprint of what every part must share: the example's bytes and the size's overrides. */
export function settingsFingerprint(exampleBytes: Buffer | string, size: string, overrides: unknown): string {
  return createHash('sha256').update(exampleBytes).update('\0').update(JSON.stringify({ size, overrides })).digest('hex');
}

const partFile = (dir: string, part: string) => join(dir, `${part}.json`);

/** A finished part's file, or undefined when the part has not finished; a file that is not a part is refused. */
export async function readPart(dir: string, part: string): Promise<LearningPart | undefined> {
  let text: string;
  try {
    text = await readFile(partFile(dir, part), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const parsed = LearningPartSchema.safeParse(JSON.parse(text));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(file)'}: ${issue.message}`);
    throw new Error(`${partFile(dir, part)} is not a bench:learning part:\n  ${problems.join('\n  ')}`);
  }
  if (parsed.data.part !== part) throw new Error(`${partFile(dir, part)} holds the part ${parsed.data.part}, not ${part}`);
  return parsed.data;
}

/** Writes a finished part (whole or not at all: a stopped run never leaves half a file). */
export async function writePart(dir: string, part: LearningPart): Promise<string> {
  const file = partFile(dir, part.part);
  await writeAtomically(file, `${JSON.stringify(LearningPartSchema.parse(part))}\n`);
  return file;
}

/**
 * The seed runs the figures are computed from, once every part is present: the first seed carries the
 * zero-shot scores. Parts run under other settings than the others are refused.
 */
export function poolParts(parts: LearningPart[], seeds: readonly number[]): SeedRun[] {
  const settings = new Set(parts.map((p) => p.settings));
  if (settings.size > 1) {
    throw new Error(`the parts ran under different settings and cannot be pooled: ${parts.map((p) => `${p.part} ${p.settings.slice(0, 12)}`).join(', ')}`);
  }
  const byName = new Map(parts.map((p) => [p.part, p]));
  const zeroShot = byName.get(ZERO_SHOT_PART)?.zeroShot;
  if (!zeroShot) throw new Error(`the ${ZERO_SHOT_PART} part has no scores`);
  return seeds.map((seed, i) => {
    const phases = byName.get(seedPart(seed))?.phases;
    if (!phases?.length) throw new Error(`the ${seedPart(seed)} part has no evaluations`);
    return i === 0 ? { phases, zeroShot } : { phases };
  });
}
