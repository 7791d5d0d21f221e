/**
 * Storage faults in two kinds: permanent ones (wrong credentials, missing bucket) that no retry can
 * fix and must fail loudly, and transient ones (network, throttling, 5xx) left to retries. The error
 * `name`s are what Temporal records as the failure type, so retry policies can list the permanent ones.
 */

export class StoragePermanentError extends Error {
  override name = 'StoragePermanentError';
}

export class StorageTransientError extends Error {
  override name = 'StorageTransientError';
}

export class StorageNotFoundError extends Error {
  override name = 'StorageNotFoundError';
}

const AUTH_CODES = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'AccessDenied',
  'ExpiredToken',
  'InvalidToken',
  'InvalidClientTokenId',
  'AuthorizationHeaderMalformed',
]);

interface SdkErrorShape {
  name?: string;
  Code?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

/** Where the failure happened, for messages that name endpoint and bucket but never a secret. */
export interface StorageTarget {
  endpoint: string;
  bucket: string;
}

export function classifyStorageError(error: unknown, target: StorageTarget, operation: string, key?: string): Error {
  if (error instanceof StoragePermanentError || error instanceof StorageTransientError || error instanceof StorageNotFoundError) {
    return error;
  }
  const sdk = (error ?? {}) as SdkErrorShape;
  const code = sdk.Code ?? sdk.name ?? sdk.code ?? 'UnknownError';
  const status = sdk.$metadata?.httpStatusCode;
  const where = `S3 at ${target.endpoint}, bucket '${target.bucket}'`;
  const what = key ? `${operation} ${key}` : operation;
  if (AUTH_CODES.has(code) || status === 401 || status === 403) {
    return new StoragePermanentError(`${where} rejected the credentials (${code}) during ${what}; check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY`);
  }
  if (code === 'NoSuchBucket') {
    return new StoragePermanentError(`${where}: the bucket does not exist (during ${what}); run 'webrl stack up' or create it`);
  }
  if (code === 'NoSuchKey' || code === 'NotFound' || status === 404) {
    return new StorageNotFoundError(`${where}: no object ${key ?? ''} (during ${operation})`);
  }
  if (code === 'InvalidBucketName' || code === 'InvalidArgument' || status === 400) {
    return new StoragePermanentError(`${where} refused ${what}: ${code}: ${sdk.message ?? ''}`);
  }
  return new StorageTransientError(`${where}: ${what} failed after retries: ${code}${status ? ` (HTTP ${status})` : ''}: ${sdk.message ?? String(error)}`);
}
