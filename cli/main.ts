/**
 * The `webrl` command line. Failures print as one line that says what to do (cli/errors.ts); usage
 * errors exit 2, refused requests and other failures 1.
 */
import { Command, CommanderError } from 'commander';
import { describeFailure, UsageError } from './errors';
import { registerCampaignCommands } from './campaign';
import { registerEnvCommands } from './env';
import { registerRolloutCommand } from './rollout';
import { registerStackCommands } from './stack';
import { registerTaskCommands } from './tasks';

// --debug (anywhere on the line) adds the stack trace to a failure's one line.
const debug = process.argv.includes('--debug');
const argv = process.argv.filter((arg) => arg !== '--debug');

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

try {
  await program.parseAsync(argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander has printed the message (or the help); exit 2 for a usage error, 0 for --help.
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    const line = describeFailure(error);
    console.error(`webrl: ${line ?? (error as Error)?.message ?? String(error)}`);
    if (debug) console.error(error);
    else if (!line) console.error('webrl: (run again with --debug for the stack trace)');
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}
