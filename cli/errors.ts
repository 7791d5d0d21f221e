/**
 * What the CLI prints for a failure: one line that says what happened and what to do, for the errors
 * an operator meets (bad config, a campaign that is not in the state a request needs, a server that
 * does not answer); the stack trace only with --debug.
 */
import { ServiceError, WorkflowUpdateFailedError } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/common';
import { unreachableServer } from '../infra/outage';

/** A command line that makes no sense (exit 2, like commander's own usage errors). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Errors of this project whose message is already the one line to print. */
const OWN_ERRORS = new Set([
  'ConfigError',
  'SecretsError',
  'StackError',
  'ToolNotAvailableError',
  'StoragePermanentError',
  'StorageTransientError',
  'StorageNotFoundError',
  'CampaignError',
  'NoWorkerError',
  'TaskConfigError',
  'UsageError',
]);

/** `campaign-<name>` -> `<name>` (the campaign workflows' ids); other ids as they are. */
function campaignName(workflowId: string | undefined): string {
  return (workflowId ?? '').replace(/^campaign-/, '') || '?';
}

/** The line for an error an operator can act on, or undefined for an unexpected one. */
export function describeFailure(error: unknown): string | undefined {
  const failure = error as Error;
  if (OWN_ERRORS.has(failure?.name)) return failure.message;
  if (error instanceof WorkflowExecutionAlreadyStartedError) {
    const name = campaignName(error.workflowId);
    return `campaign '${name}' is already running; use 'webrl campaign status -n ${name}'`;
  }
  if (error instanceof WorkflowNotFoundError) {
    const name = campaignName(error.workflowId);
    if (/already completed/i.test(error.message)) {
      return `campaign '${name}' has already finished; 'webrl campaign report -n ${name}' shows its results`;
    }
    return `no campaign '${name}' on this Temporal namespace; 'webrl campaign list' shows the campaigns there`;
  }
  if (error instanceof WorkflowUpdateFailedError) {
    const cause = (error.cause as Error | undefined)?.message ?? error.message;
    return `the campaign refused the request: ${cause}`;
  }
  if (unreachableServer(error) === 'Temporal') {
    return (
      `the Temporal server does not answer (${failure.message.split('\n')[0]}); ` +
      "is it up? 'webrl stack status' tells, 'webrl stack up' starts the local one, temporal.address names another"
    );
  }
  if (error instanceof ServiceError) return `Temporal refused the request: ${failure.message}`;
  return undefined;
}
