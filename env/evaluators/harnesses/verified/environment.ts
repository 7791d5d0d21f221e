/**
 * WebArena-Verified's official evaluator, provisioned like vLLM (infra/vllm/environment.ts): a Python
 * interpreter that imports `webarena_verified`. Looked up in order: `$WEBRL_WEBARENA_VERIFIED_PYTHON`
 * (any Python >= 3.11 with the package), the virtual environment under the data dir
 * (`$WEBRL_DATA_DIR/webarena-verified/venv`), else that environment is made from PyPI with the pinned
 * version. A stamp of the version in the environment says whether it is current.
 *
 * It has its own environment because the package pins its dependencies exactly (pydantic,
 * beautifulsoup4, ...), which the trainer's and vLLM's environments need not agree with.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { runLoud, ToolNotAvailableError, type Log, type ResolvedTool } from '../../../../infra/tools';

const run = promisify(execFile);

/** The PyPI release the project scores with (pure Python, Python >= 3.11). */
export const WEBARENA_VERIFIED_VERSION = '1.2.3';

function venvDir(): string {
  return resolve(process.env.WEBRL_DATA_DIR ?? '.webrl', 'webarena-verified', 'venv');
}

async function packageVersion(python: string): Promise<string> {
  const script = 'import importlib.metadata as m, sys; import webarena_verified; sys.stdout.write(m.version("webarena-verified"))';
  try {
    const { stdout } = await run(python, ['-c', script], { timeout: 120_000 });
    return stdout.trim();
  } catch (error) {
    throw new ToolNotAvailableError(`${python} cannot import webarena_verified: ${(error as Error).message.split('\n')[0]}`);
  }
}

/** The Python that runs the official evaluator; installs the package into the data dir when nothing else has it. */
export async function ensureWebArenaVerified(log: Log = () => {}): Promise<ResolvedTool> {
  const fromEnv = process.env.WEBRL_WEBARENA_VERIFIED_PYTHON;
  if (fromEnv) return { name: 'webarena-verified', path: fromEnv, version: `webarena-verified ${await packageVersion(fromEnv)}`, source: 'env' };
  const venv = venvDir();
  const python = join(venv, 'bin', 'python');
  const stamp = join(venv, 'webrl-pins.txt');
  if (existsSync(python) && existsSync(stamp) && (await readFile(stamp, 'utf8')).trim() === WEBARENA_VERIFIED_VERSION) {
    return { name: 'webarena-verified', path: python, version: `webarena-verified ${WEBARENA_VERIFIED_VERSION}`, source: 'datadir' };
  }
  const started = Date.now();
  if (!existsSync(python)) {
    const base = process.env.WEBRL_PYTHON ?? 'python3';
    log(`webarena-verified not found; creating ${venv} with ${base} (needs Python >= 3.11) from PyPI`);
    await runLoud(base, ['-m', 'venv', venv], log);
  }
  await runLoud(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `webarena-verified==${WEBARENA_VERIFIED_VERSION}`], log);
  await writeFile(stamp, `${WEBARENA_VERIFIED_VERSION}\n`);
  log(`webarena-verified: environment ready in ${Math.round((Date.now() - started) / 1000)} s`);
  return { name: 'webarena-verified', path: python, version: `webarena-verified ${await packageVersion(python)}`, source: 'installed' };
}
