/** The `webrl` command tree, for the entry point (cli/main.ts) and for tests that read its help. */
import { Command } from 'commander';
import { registerCampaignCommands } from './campaign';
import { registerEnvCommands } from './env';
import { registerExportCommands } from './export';
import { registerRolloutCommand } from './rollout';
import { registerStackCommands } from './stack';
import { registerTaskCommands } from './tasks';

export function createProgram(): Command {
  const program = new Command()
    .name('webrl')
    .description('WebRL training campaigns as durable Temporal workflows (--debug: stack traces on failure)')
    .showHelpAfterError()
    // Usage errors are thrown, not exited on, so they get their own exit code (2).
    .exitOverride();
  registerStackCommands(program);
  registerCampaignCommands(program);
  registerRolloutCommand(program);
  registerEnvCommands(program);
  registerTaskCommands(program);
  registerExportCommands(program);
  return program;
}
