/**
 * MiniWoB++'s pages, read from the PyPI wheel of `miniwob` 1.1.0 (MIT, Farama Foundation) cached under
 * the data dir: no Python environment at run time. The wheel is a zip; its `miniwob/html/` folder
 * (task pages under `miniwob/`, shared scripts under `core/` and `common/`, the flight pages under
 * `flight/`) is extracted once next to it, and the browser worker serves that folder.
 *
 * Where the wheel comes from, in order: `$WEBRL_MINIWOB_WHEEL` (a file), the data dir's copy
 * (`$WEBRL_DATA_DIR/miniwob/`, `.webrl/miniwob/` by default), else `pip download --no-deps
 * miniwob==1.1.0` from PyPI into the data dir. Every copy must have the pinned SHA-256.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { inflateRawSync } from 'node:zlib';

export const MINIWOB_VERSION = '1.1.0';
export const MINIWOB_WHEEL = `miniwob-${MINIWOB_VERSION}-py3-none-any.whl`;
/** SHA-256 of the wheel PyPI serves for miniwob 1.1.0. */
export const MINIWOB_WHEEL_SHA256 = '297006e84219d56ad037e843527ed773a4a82509dc43b6031ec4a3ad3e3e61d9';

export interface MiniwobPages {
  /** The extracted `html/` folder: `miniwob/<task>.html`, `core/`, `common/`. */
  root: string;
  /** Where the wheel came from: env, datadir (an earlier copy) or downloaded (pip, from PyPI). */
  source: 'env' | 'datadir' | 'downloaded';
  wheel: string;
}

export class MiniwobUnavailable extends Error {
  override name = 'MiniwobUnavailable';
}

function dataDir(env: NodeJS.ProcessEnv): string {
  return resolve(env.WEBRL_DATA_DIR ?? '.webrl', 'miniwob');
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The entries of a zip archive (stored or deflated), by name; directories are left out. */
export function readZip(archive: Buffer): Map<string, Buffer> {
  // The end of central directory record: signature 0x06054b50, at most 64 KiB of comment after it.
  let end = -1;
  for (let at = archive.length - 22; at >= Math.max(0, archive.length - 22 - 65_535); at--) {
    if (archive.readUInt32LE(at) === 0x06054b50) {
      end = at;
      break;
    }
  }
  if (end < 0) throw new Error('not a zip archive (no end of central directory)');
  const count = archive.readUInt16LE(end + 10);
  let at = archive.readUInt32LE(end + 16);
  const entries = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    if (archive.readUInt32LE(at) !== 0x02014b50) throw new Error('corrupt zip central directory');
    const method = archive.readUInt16LE(at + 10);
    const compressedSize = archive.readUInt32LE(at + 20);
    const nameLength = archive.readUInt16LE(at + 28);
    const extraLength = archive.readUInt16LE(at + 30);
    const commentLength = archive.readUInt16LE(at + 32);
    const localHeader = archive.readUInt32LE(at + 42);
    const name = archive.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (name.endsWith('/')) continue;
    const dataStart = localHeader + 30 + archive.readUInt16LE(localHeader + 26) + archive.readUInt16LE(localHeader + 28);
    const data = archive.subarray(dataStart, dataStart + compressedSize);
    if (method === 0) entries.set(name, Buffer.from(data));
    else if (method === 8) entries.set(name, inflateRawSync(data));
    else throw new Error(`zip entry ${name} uses compression method ${method}`);
  }
  return entries;
}

async function checkedWheel(path: string): Promise<Buffer> {
  const bytes = await readFile(path);
  const digest = sha256(bytes);
  if (digest !== MINIWOB_WHEEL_SHA256)
    throw new MiniwobUnavailable(`${path} is not miniwob ${MINIWOB_VERSION}'s wheel (sha256 ${digest}, expected ${MINIWOB_WHEEL_SHA256})`);
  return bytes;
}

async function download(dir: string, log: (message: string) => void): Promise<void> {
  log(`downloading ${MINIWOB_WHEEL} from PyPI (pip download --no-deps miniwob==${MINIWOB_VERSION})`);
  await mkdir(dir, { recursive: true });
  try {
    await promisify(execFile)(
      process.env.WEBRL_PYTHON ?? 'python3',
      ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', `miniwob==${MINIWOB_VERSION}`, '-d', dir],
      {
        timeout: 300_000,
      },
    );
  } catch (error) {
    throw new MiniwobUnavailable(
      `could not download miniwob ${MINIWOB_VERSION} from PyPI with pip (${(error as Error).message.split('\n')[0]}); put ${MINIWOB_WHEEL} in ${dir} or set WEBRL_MINIWOB_WHEEL`,
    );
  }
}

const pending = new Map<string, Promise<MiniwobPages>>();

/** MiniWoB++'s pages, found or fetched and extracted under the data dir (once per process and dir). */
export function ensureMiniwobPages(log: (message: string) => void = () => {}, env: NodeJS.ProcessEnv = process.env): Promise<MiniwobPages> {
  const dir = dataDir(env);
  const key = `${dir}\n${env.WEBRL_MINIWOB_WHEEL ?? ''}`;
  let found = pending.get(key);
  if (!found) {
    found = locate(dir, log, env);
    pending.set(key, found);
    found.catch(() => pending.delete(key));
  }
  return found;
}

async function locate(dir: string, log: (message: string) => void, env: NodeJS.ProcessEnv): Promise<MiniwobPages> {
  let wheel = env.WEBRL_MINIWOB_WHEEL;
  let source: MiniwobPages['source'] = 'env';
  if (wheel) {
    if (!(await exists(wheel))) throw new MiniwobUnavailable(`WEBRL_MINIWOB_WHEEL=${wheel} does not exist`);
  } else {
    wheel = join(dir, MINIWOB_WHEEL);
    source = 'datadir';
    if (!(await exists(wheel))) {
      await download(dir, log);
      source = 'downloaded';
    }
  }
  const root = join(dir, MINIWOB_VERSION, 'html');
  const marker = join(dir, MINIWOB_VERSION, '.extracted');
  if (!(await exists(marker))) {
    const entries = readZip(await checkedWheel(wheel));
    // Extract into a fresh folder, then rename: a crash half-way leaves no half-extracted pages behind.
    const staging = `${root}.${process.pid}.tmp`;
    await rm(staging, { recursive: true, force: true });
    for (const [name, data] of entries) {
      if (!name.startsWith('miniwob/html/')) continue;
      const target = resolve(staging, name.slice('miniwob/html/'.length));
      if (!target.startsWith(staging + sep)) throw new MiniwobUnavailable(`${wheel}: entry ${name} leaves the folder`);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, data);
    }
    await rm(root, { recursive: true, force: true });
    await rename(staging, root);
    await writeFile(marker, `${MINIWOB_WHEEL} ${MINIWOB_WHEEL_SHA256}\n`);
    log(`extracted MiniWoB++ ${MINIWOB_VERSION}'s pages into ${root}`);
  }
  return { root, source, wheel };
}
