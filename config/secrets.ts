/**
 * Secrets come from the environment only, and are wrapped so that logging, JSON serialisation or
 * util.inspect of a config object can never print them.
 */
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';

export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[redacted]';
  }
  toJSON(): string {
    return '[redacted]';
  }
  [inspect.custom](): string {
    return '[redacted]';
  }
}

export interface S3Credentials {
  accessKeyId: Secret;
  secretAccessKey: Secret;
  sessionToken?: Secret;
}

export interface Secrets {
  /** Undefined: let the AWS SDK's default chain find credentials (instance roles, profiles). */
  s3?: S3Credentials;
  temporal: {
    apiKey?: Secret;
    clientCert?: Secret;
    clientKey?: Secret;
  };
  /** Keys of the remote model endpoints (config `models`); unset for keyless local servers. */
  models?: ModelSecrets;
}

export interface ModelSecrets {
  /** Sent to the OpenAI-compatible endpoints (actor, ORM, task generator, feasibility judge). */
  llmApiKey?: Secret;
  /** Sent to the HTTP critic as a bearer token. */
  criticApiKey?: Secret;
}

/** The environment variables read here; the README's configuration reference lists the same. */
export const SECRET_ENV = {
  s3AccessKeyId: 'AWS_ACCESS_KEY_ID',
  s3SecretAccessKey: 'AWS_SECRET_ACCESS_KEY',
  s3SessionToken: 'AWS_SESSION_TOKEN',
  temporalApiKey: 'TEMPORAL_API_KEY',
  temporalClientCertPath: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
  temporalClientKeyPath: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
  llmApiKey: 'WEBRL_LLM_API_KEY',
  /** Read when WEBRL_LLM_API_KEY is unset. */
  llmApiKeyFallback: 'OPENAI_API_KEY',
  criticApiKey: 'WEBRL_CRITIC_API_KEY',
  /** The shop's admin account, for WebArena's REST evaluation helpers on a real Magento. */
  shopAdminUsername: 'WEBRL_SHOPPING_ADMIN_USERNAME',
  shopAdminPassword: 'WEBRL_SHOPPING_ADMIN_PASSWORD',
} as const;

/**
 * Secret values this process holds that are not (or not only) in its environment: generated local
 * stack keys, site passwords read through a configured variable, tokens a server handed back. The
 * scrubber (storage/scrub.ts) keeps every one of them, and every secret-named environment variable,
 * out of stored objects. Values shorter than this are too common to replace in free text.
 */
export const MIN_SCRUBBED_SECRET_CHARS = 6;
const heldSecretValues = new Set<string>();

/** Records values that must never be stored (their field names aside: wherever they appear). */
export function neverStore(...values: (Secret | string | undefined)[]): void {
  for (const value of values) {
    const text = value instanceof Secret ? value.reveal() : value;
    if (text && text.length >= MIN_SCRUBBED_SECRET_CHARS) heldSecretValues.add(text);
  }
}

/** Environment variables whose values are secrets: the ones read here (not the usernames or file paths) and any named like one. */
const SECRET_VARIABLE = /(?:^|_)(?:PASSWORD|PASSWD|PASSCODE|PASSPHRASE|SECRET|TOKEN|API_?KEY|SECRET_(?:ACCESS_)?KEY|ACCESS_KEY_ID|PRIVATE_KEY)$/i;

/** Every secret value this process knows: the ones recorded by `neverStore` and those of secret-named environment variables. */
export function knownSecretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  const values = new Set(heldSecretValues);
  for (const [name, value] of Object.entries(env)) {
    if (value && value.length >= MIN_SCRUBBED_SECRET_CHARS && SECRET_VARIABLE.test(name)) values.add(value);
  }
  return [...values];
}

export class SecretsError extends Error {
  override name = 'SecretsError';
}

function fromEnv(env: NodeJS.ProcessEnv, key: string): Secret | undefined {
  const value = env[key];
  return value ? new Secret(value) : undefined;
}

function fileFromEnv(env: NodeJS.ProcessEnv, key: string): Secret | undefined {
  const path = env[key];
  if (!path) return undefined;
  try {
    return new Secret(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new SecretsError(`${key} names ${path}, which cannot be read: ${(error as NodeJS.ErrnoException).code}`);
  }
}

/** The model endpoints' keys alone (activities read them where they build a remote backend). */
export function loadModelSecrets(env: NodeJS.ProcessEnv = process.env): ModelSecrets {
  const llmApiKey = fromEnv(env, SECRET_ENV.llmApiKey) ?? fromEnv(env, SECRET_ENV.llmApiKeyFallback);
  const criticApiKey = fromEnv(env, SECRET_ENV.criticApiKey);
  neverStore(llmApiKey, criticApiKey);
  return { ...(llmApiKey ? { llmApiKey } : {}), ...(criticApiKey ? { criticApiKey } : {}) };
}

/** An admin account of the shop (Magento), which WebArena's helpers exchange for a REST token. */
export interface ShopAdminAccount {
  username: Secret;
  password: Secret;
}

/** The shop's admin account from the environment; undefined when neither variable is set. */
export function loadShopAdminAccount(env: NodeJS.ProcessEnv = process.env): ShopAdminAccount | undefined {
  const username = fromEnv(env, SECRET_ENV.shopAdminUsername);
  const password = fromEnv(env, SECRET_ENV.shopAdminPassword);
  if (Boolean(username) !== Boolean(password)) {
    throw new SecretsError(`${SECRET_ENV.shopAdminUsername} and ${SECRET_ENV.shopAdminPassword} must be set together`);
  }
  neverStore(password);
  return username && password ? { username, password } : undefined;
}

/**
 * Reads secrets from `env`. With no S3 keys set, `s3` is left out; `loadSettings` then fills in the
 * local stack's generated credentials when that stack is the target (config/settings.ts).
 */
export function loadSecrets(env: NodeJS.ProcessEnv = process.env): Secrets {
  const accessKeyId = fromEnv(env, SECRET_ENV.s3AccessKeyId);
  const secretAccessKey = fromEnv(env, SECRET_ENV.s3SecretAccessKey);
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    throw new SecretsError(`${SECRET_ENV.s3AccessKeyId} and ${SECRET_ENV.s3SecretAccessKey} must be set together (only one is set)`);
  }
  const sessionToken = fromEnv(env, SECRET_ENV.s3SessionToken);
  const s3 = accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } : undefined;
  const clientCert = fileFromEnv(env, SECRET_ENV.temporalClientCertPath);
  const clientKey = fileFromEnv(env, SECRET_ENV.temporalClientKeyPath);
  if (Boolean(clientCert) !== Boolean(clientKey)) {
    throw new SecretsError(`${SECRET_ENV.temporalClientCertPath} and ${SECRET_ENV.temporalClientKeyPath} must be set together`);
  }
  const apiKey = fromEnv(env, SECRET_ENV.temporalApiKey);
  neverStore(accessKeyId, secretAccessKey, sessionToken, clientKey, apiKey);
  return {
    ...(s3 ? { s3 } : {}),
    temporal: { ...(apiKey ? { apiKey } : {}), ...(clientCert && clientKey ? { clientCert, clientKey } : {}) },
    models: loadModelSecrets(env),
  };
}
