/**
 * `npm run lint` (and `npm run format` with `--fix`): ruff's formatter and linter over the trainer and
 * the vLLM CPU LoRA plugin, with
 * the settings in pyproject.toml. Ruff comes from PyPI at a pinned version into a small environment of
 * its own under the data dir (`.webrl/python/ruff`), made on first use and reused afterwards, so lint
 * runs before, and without, the trainer's multi-GB environment.
 */
import { join } from 'node:path';
import { ensurePythonEnvironment, packageDir, pythonDir, run } from './environment';
import { CPU_LORA_PLUGIN } from '../../infra/vllm/environment';

const RUFF_VERSION = '0.17.6';

const fix = process.argv.includes('--fix');
try {
  const python = ensurePythonEnvironment({
    label: 'ruff',
    dir: join(pythonDir, 'ruff'),
    install: [`ruff==${RUFF_VERSION}`],
    pins: RUFF_VERSION,
    installing: `installing ruff ${RUFF_VERSION} from PyPI (about 12 MB)`,
  });
  const steps = fix
    ? [
        ['format', '.'],
        ['check', '--fix', '.'],
      ]
    : [
        ['format', '--check', '.'],
        ['check', '.'],
      ];
  // The trainer and the vLLM CPU LoRA plugin, each with the ruff settings in its own pyproject.toml.
  const codes = [packageDir, CPU_LORA_PLUGIN].flatMap((dir) => steps.map((args) => run(python, ['-m', 'ruff', ...args], dir)));
  process.exitCode = codes.some((code) => code !== 0) ? 1 : 0;
} catch (error) {
  console.error(`ruff: ${(error as Error).message}`);
  process.exitCode = 1;
}
