/**
 * Retry policies shared by workflows. Infrastructure faults are retried with backoff; faults no retry
 * can fix (bad config, bad data, rejected credentials) are listed by error type and fail at once.
 */
import type { RetryPolicy } from '@temporalio/common';

export const PERMANENT_ERROR_TYPES = ['StoragePermanentError', 'ConfigError', 'SecretsError', 'TaskConfigError', 'ExternalTrainerError'];

export const INFRASTRUCTURE_RETRY: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 20,
  nonRetryableErrorTypes: PERMANENT_ERROR_TYPES,
};
