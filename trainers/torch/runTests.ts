/**
 * `npm run test:python`: the trainer's environment (environment.ts), then its pytest suite and the
 * vLLM CPU LoRA plugin's (infra/vllm/cpu_lora: plain PyTorch, which the trainer's environment has).
 */
import { ensureTrainerEnvironment, packageDir, run } from './environment';
import { CPU_LORA_PLUGIN } from '../../infra/vllm/environment';

try {
  const python = ensureTrainerEnvironment();
  const pytest = (dir: string) => run(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '--durations=10', 'tests'], dir);
  process.exitCode = [packageDir, CPU_LORA_PLUGIN].map(pytest).some((code) => code !== 0) ? 1 : 0;
} catch (error) {
  console.error(`python: ${(error as Error).message}`);
  process.exitCode = 1;
}
