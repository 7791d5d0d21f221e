/**
 * A mid-training checkpoint in one file, written atomically (temporary file, then rename), so a run
 * killed at any moment leaves the previous checkpoint whole:
 *
 *   "WEBRLTS1" | uint32 LE header length | header JSON | float32 LE tensors, in header order
 *
 * The header holds the step, the data-order RNG state, the current epoch order and cursor, Adam's step,
 * the recent losses and the job fingerprint; the tensors are the network's parameters followed by Adam's
 * first and second moments. Restoring it and continuing gives bit-identical weights to a run that was
 * never interrupted.
 */
import { readFile, rename, writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { PARAMETER_NAMES, type Network, type NetworkShape } from '../network';
import type { AdamState } from './optimizer';

const MAGIC = 'WEBRLTS1';

export interface TrainingCursor {
  step: number;
  rngState: number;
  order: number[];
  position: number;
  recentLosses: number[];
}

export interface TrainingSnapshot {
  fingerprint: string;
  cursor: TrainingCursor;
  network: Network;
  adam: AdamState;
}

interface Header {
  format: 1;
  fingerprint: string;
  cursor: TrainingCursor;
  shape: NetworkShape;
  adamStep: number;
  tensors: { name: string; length: number }[];
}

function tensorList(snapshot: TrainingSnapshot): { name: string; data: Float32Array }[] {
  return [
    ...PARAMETER_NAMES.map((name) => ({ name: `param.${name}`, data: snapshot.network.params[name] })),
    ...PARAMETER_NAMES.map((name) => ({ name: `adam.first.${name}`, data: snapshot.adam.first[name] })),
    ...PARAMETER_NAMES.map((name) => ({ name: `adam.second.${name}`, data: snapshot.adam.second[name] })),
  ];
}

export async function writeTrainingState(path: string, snapshot: TrainingSnapshot): Promise<void> {
  const tensors = tensorList(snapshot);
  const header: Header = {
    format: 1,
    fingerprint: snapshot.fingerprint,
    cursor: snapshot.cursor,
    shape: snapshot.network.shape,
    adamStep: snapshot.adam.step,
    tensors: tensors.map(({ name, data }) => ({ name, length: data.length })),
  };
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(MAGIC.length + 4);
  prefix.write(MAGIC, 0, 'ascii');
  prefix.writeUInt32LE(headerBytes.length, MAGIC.length);
  const parts = [prefix, headerBytes, ...tensors.map(({ data }) => Buffer.from(data.buffer, data.byteOffset, data.byteLength))];
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.partial`;
  await writeFile(temporary, parts);
  await rename(temporary, path);
}

export async function readTrainingState(path: string): Promise<TrainingSnapshot> {
  const bytes = await readFile(path);
  if (bytes.subarray(0, MAGIC.length).toString('ascii') !== MAGIC) throw new Error(`${path} is not a training-state file`);
  const headerLength = bytes.readUInt32LE(MAGIC.length);
  const headerStart = MAGIC.length + 4;
  const header = JSON.parse(bytes.subarray(headerStart, headerStart + headerLength).toString('utf8')) as Header;
  if (header.format !== 1) throw new Error(`${path}: unknown training-state format ${String(header.format)}`);
  let offset = headerStart + headerLength;
  const tensors = new Map<string, Float32Array>();
  for (const { name, length } of header.tensors) {
    const end = offset + length * 4;
    if (end > bytes.length) throw new Error(`${path} is truncated (tensor ${name})`);
    // Copy into a fresh, aligned buffer.
    const data = new Float32Array(length);
    new Uint8Array(data.buffer).set(bytes.subarray(offset, end));
    tensors.set(name, data);
    offset = end;
  }
  const take = (name: string) => {
    const data = tensors.get(name);
    if (!data) throw new Error(`${path} has no tensor ${name}`);
    return data;
  };
  const group = (prefix: string) => Object.fromEntries(PARAMETER_NAMES.map((name) => [name, take(`${prefix}${name}`)])) as Network['params'];
  return {
    fingerprint: header.fingerprint,
    cursor: header.cursor,
    network: { shape: header.shape, params: group('param.') },
    adam: { step: header.adamStep, first: group('adam.first.'), second: group('adam.second.') },
  };
}
