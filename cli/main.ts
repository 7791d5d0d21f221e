/**
 * The `webrl` command line. Failures print as one line that says what to do (cli/errors.ts); usage
 * errors exit 2, refused requests and other failures 1.
 */
import { CommanderError } from 'commander';
import { describeFailure, UsageError } from './errors';
import { createProgram } from './program';

// --debug (anywhere on the line) adds the stack trace to a failure's one line.
const debug = process.argv.includes('--debug');
const argv = process.argv.filter((arg) => arg !== '--debug');
const program = createProgram();

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
