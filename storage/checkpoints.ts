/**
 * Checkpoints in storage, a single file or a directory (a Hugging Face checkpoint, a PEFT adapter):
 *
 *   file        the object at `key`
 *   directory   its files under `key/<relative path>`, and beside them `key.files.json`, the listing
 *               (relative path, bytes, sha256 of every file), written after the files
 *
 * Staging reads the listing first: with one, the checkpoint comes back as a directory whose every file
 * is checked against its listed size and sha256; without one, it is the single object at `key`.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArtifactStore, ObjectInfo } from './artifactStore';
import { StoragePermanentError } from './errors';

export type CheckpointStore = Pick<ArtifactStore, 'uploadFile' | 'downloadFile' | 'putJson' | 'tryGetJson'>;

export interface CheckpointFile {
  /** Relative to the checkpoint's root, '/'-separated. */
  path: string;
  bytes: number;
  sha256: string;
}

export interface CheckpointListing {
  schema: 'webrl.checkpoint-files/1';
  files: CheckpointFile[];
}

export function checkpointListingKey(key: string): string {
  return `${key.replace(/\/+$/, '')}.files.json`;
}

function fileKey(key: string, path: string): string {
  return `${key.replace(/\/+$/, '')}/${path}`;
}

/** The files under `dir`, relative and '/'-separated, in a stable order. */
async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const entries = (await readdir(join(dir, prefix), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) return filesUnder(dir, path);
      return entry.isFile() ? [path] : [];
    }),
  );
  return nested.flat();
}

/** A listed path must stay inside the checkpoint: no absolute paths, no '..'. */
function checkListedPath(key: string, path: string): string {
  if (!path || path.startsWith('/') || path.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    throw new StoragePermanentError(`checkpoint ${key} lists the file '${path}', which is not a plain relative path`);
  }
  return path;
}

/**
 * Stores the file or directory at `localPath` as the checkpoint `key`; returns the objects written
 * (for a directory: its files, then the listing).
 */
export async function uploadCheckpoint(store: CheckpointStore, key: string, localPath: string): Promise<ObjectInfo[]> {
  const info = await stat(localPath);
  if (!info.isDirectory()) return [await store.uploadFile(key, localPath)];
  const objects: ObjectInfo[] = [];
  for (const path of await filesUnder(localPath)) {
    objects.push(await store.uploadFile(fileKey(key, path), join(localPath, ...path.split('/'))));
  }
  const listing: CheckpointListing = {
    schema: 'webrl.checkpoint-files/1',
    files: objects.map((object) => ({ path: object.key.slice(fileKey(key, '').length), bytes: object.bytes, sha256: object.sha256 })),
  };
  objects.push(await store.putJson(checkpointListingKey(key), listing));
  return objects;
}

/** The listing of a directory checkpoint, or undefined for a single-file one. */
export async function readCheckpointListing(store: Pick<CheckpointStore, 'tryGetJson'>, key: string): Promise<CheckpointListing | undefined> {
  const listing = await store.tryGetJson<CheckpointListing>(checkpointListingKey(key));
  if (listing && (listing.schema !== 'webrl.checkpoint-files/1' || !Array.isArray(listing.files))) {
    throw new StoragePermanentError(`${checkpointListingKey(key)} is not a checkpoint file listing`);
  }
  return listing;
}

/**
 * Stages the checkpoint `key` at `localPath`: a directory checkpoint as a directory (each file's size
 * and sha256 verified against the listing), a single-file one as a file.
 */
export async function downloadCheckpoint(
  store: CheckpointStore,
  key: string,
  localPath: string,
): Promise<{ kind: 'file' | 'directory'; files: CheckpointFile[] }> {
  const listing = await readCheckpointListing(store, key);
  if (!listing) {
    const info = await store.downloadFile(key, localPath);
    return { kind: 'file', files: [{ path: '', bytes: info.bytes, sha256: info.sha256 }] };
  }
  for (const file of listing.files) {
    const path = checkListedPath(key, file.path);
    const got = await store.downloadFile(fileKey(key, path), join(localPath, ...path.split('/')));
    if (got.sha256 !== file.sha256 || got.bytes !== file.bytes) {
      throw new StoragePermanentError(
        `checkpoint ${key}: ${path} came back with ${got.bytes} bytes, sha256 ${got.sha256}; the listing says ${file.bytes} bytes, sha256 ${file.sha256}`,
      );
    }
  }
  return { kind: 'directory', files: listing.files };
}

/**
 * Stages a checkpoint at `dir` through a temporary name of its own, so a half-synced copy is never used
 * and two attempts syncing at once (a retry racing its first attempt) both end with the one copy.
 */
export async function syncCheckpoint(store: CheckpointStore, key: string, dir: string): Promise<void> {
  if (existsSync(dir)) return;
  const partial = `${dir}.partial-${randomUUID()}`;
  try {
    await downloadCheckpoint(store, key, partial);
    await rename(partial, dir).catch((error: NodeJS.ErrnoException) => {
      if (!existsSync(dir)) throw error; // else another attempt finished first: its copy is the same checkpoint
    });
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
}
