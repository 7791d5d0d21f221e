/**
 * The `webrl` command line. Errors from bad input print as one clear message, not a stack trace.
 */
import { Command } from 'commander';
import { registerCampaignCommands } from './campaign';
import { registerEnvCommands } from './env';
import { registerExportCommands } from './export';
import { registerRolloutCommand } from './rollout';
import { registerStackCommands } from './stack';
import { registerTaskCommands } from './tasks';

const program = new Command()
  .name('webrl')
  .description('WebRL training campaigns as durable Temporal workflows')
  .showHelpAfterError();

registerStackCommands(program);
registerCampaignCommands(program);
registerRolloutCommand(program);
registerEnvCommands(program);
registerTaskCommands(program);
registerExportCommands(program);

const EXPECTED_ERRORS = new Set([
  'ConfigError',
  'SecretsError',
  'StackError',
  'ToolNotAvailableError',
  'StoragePermanentError',
  'CampaignError',
  'TaskConfigError',
]);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  const failure = error as Error;
  console.error(EXPECTED_ERRORS.has(failure.name) ? `webrl: ${failure.message}` : failure);
  process.exitCode = 1;
}
