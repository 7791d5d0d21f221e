/** `npm run test:python`: the trainer's environment (environment.ts), then its pytest suite. */
import { ensureTrainerEnvironment, packageDir, run } from './environment';

try {
  const python = ensureTrainerEnvironment();
  process.exitCode = run(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '--durations=10', 'tests'], packageDir);
} catch (error) {
  console.error(`python: ${(error as Error).message}`);
  process.exitCode = 1;
}
