/**
 * The trainer's virtual environment, for `npm run test:python` and `npm run bench:llm`.
 *
 * The environment lives under the data dir (`$WEBRL_DATA_DIR/python/venv`, `.webrl/python/venv` by
 * default). It is created and filled from PyPI on first use (torch pulls its CUDA libraries, a few GB;
 * CPU-only machines run them fine) and reused afterwards; a hash of pyproject.toml stored in it says
 * whether the pins changed since, and only then is it filled again. The package is installed editable,
 * so a change to the trainer's code needs no reinstall.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** trainers/torch, where the package and its tests are. */
export const packageDir = dirname(fileURLToPath(import.meta.url));
const venv = resolve(process.env.WEBRL_DATA_DIR ?? '.webrl', 'python', 'venv');
const venvPython = join(venv, 'bin', 'python');
const stampFile = join(venv, 'webrl-pins.sha256');

export function run(program: string, args: string[], cwd?: string): number {
  const result = spawnSync(program, args, { stdio: 'inherit', cwd });
  if (result.error) throw new Error(`cannot run ${program}: ${result.error.message}`);
  return result.status ?? 1;
}

function must(program: string, args: string[]): void {
  const code = run(program, args);
  if (code !== 0) throw new Error(`${program} ${args.join(' ')} exited with ${code}`);
}

/** Creates or refills the environment when needed; returns its python. */
export function ensureTrainerEnvironment(): string {
  const pins = createHash('sha256').update(readFileSync(join(packageDir, 'pyproject.toml'))).digest('hex');
  if (existsSync(venvPython) && existsSync(stampFile) && readFileSync(stampFile, 'utf8').trim() === pins) {
    console.log(`python: reusing ${venv} (pins unchanged)`);
    return venvPython;
  }
  const started = Date.now();
  if (!existsSync(venvPython)) {
    const python = process.env.WEBRL_PYTHON ?? 'python3';
    console.log(`python: creating ${venv} with ${python} (needs Python >= 3.11)`);
    must(python, ['-m', 'venv', venv]);
  } else {
    console.log(`python: the pins in pyproject.toml changed; refilling ${venv}`);
  }
  console.log('python: installing webrl-torch and its pinned dependencies from PyPI (a few GB on first use)');
  must(venvPython, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--editable', `${packageDir}[test]`]);
  writeFileSync(stampFile, `${pins}\n`);
  console.log(`python: environment ready in ${Math.round((Date.now() - started) / 1000)} s`);
  return venvPython;
}

