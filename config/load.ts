/**
 * Loads the config: defaults, then the campaign file, then environment overrides, validated as one
 * object. Errors name the offending field (and the file or variable it came from).
 */
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { backendWithField, findBackend } from '../env/backends/registry';
import { ConfigSchema, type Config } from './campaignConfig';
import { ConfigError } from './errors';
import { SECRET_ENV } from './secrets';

export { ConfigError };

/** Non-secret environment overrides: variable -> config path. */
export const ENV_OVERRIDES: Record<string, string[]> = {
  TEMPORAL_ADDRESS: ['temporal', 'address'],
  TEMPORAL_NAMESPACE: ['temporal', 'namespace'],
  WEBRL_S3_ENDPOINT: ['s3', 'endpoint'],
  WEBRL_S3_BUCKET: ['s3', 'bucket'],
  WEBRL_S3_PREFIX: ['s3', 'prefix'],
  AWS_REGION: ['s3', 'region'],
  WEBRL_DATA_DIR: ['stack', 'dataDir'],
};

/** Field names that look like credentials: refused in files with a pointer to the right variable. */
const SECRET_FIELD_HINTS: Record<string, string> = {
  accesskeyid: SECRET_ENV.s3AccessKeyId,
  secretaccesskey: SECRET_ENV.s3SecretAccessKey,
  sessiontoken: SECRET_ENV.s3SessionToken,
  apikey: SECRET_ENV.temporalApiKey,
  password: 'the environment',
  secret: 'the environment',
  clientkey: SECRET_ENV.temporalClientKeyPath,
  clientcert: SECRET_ENV.temporalClientCertPath,
  api_key: SECRET_ENV.temporalApiKey,
  token: 'the environment',
  bearer: 'the environment',
  authorization: 'the environment',
};

/** Keys under `models` belong to the model endpoints, not to Temporal. */
function secretHint(path: ReadonlyArray<PropertyKey>, key: string): string | undefined {
  const hint = SECRET_FIELD_HINTS[key.toLowerCase()];
  if (!hint || path[0] !== 'models') return hint;
  if (/^(api_?key|token|bearer|authorization)$/i.test(key) || hint === SECRET_ENV.temporalApiKey) {
    return path[1] === 'critic' ? SECRET_ENV.criticApiKey : `${SECRET_ENV.llmApiKey} (or ${SECRET_ENV.llmApiKeyFallback})`;
  }
  return hint;
}

function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`)).join('');
}

/** Zod's `Invalid input` for a value no member of a union accepts: what each member expected instead. */
function unionMessage(issue: z.core.$ZodIssueInvalidUnion): string {
  if (issue.message !== 'Invalid input' || !issue.errors.length) return issue.message;
  const expected = [...new Set(issue.errors.map((member) => member.map((inner) => inner.message.replace(/^Invalid (input|option): /, '')).join(', ')))];
  return expected.length === 1 ? expected[0]! : `none of the accepted forms: ${expected.join('; or ')}`;
}

function describeIssues(error: z.ZodError, envSources: Map<string, string>, backend?: string): string[] {
  const problems: string[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        // Another backend's section under this backend's settings: the backend to pick is named.
        const owner = formatPath(issue.path) === 'campaign.environment' ? backendWithField(key) : undefined;
        if (owner && backend) {
          problems.push(`campaign.environment.backend: a ${key} section is given but backend is ${backend}; set backend: ${owner.name}`);
          continue;
        }
        const path = formatPath([...issue.path, key]);
        const hint = secretHint(issue.path, key);
        problems.push(hint ? `${path}: secrets are not accepted in config files; set ${hint} instead` : `${path}: unknown field`);
      }
      continue;
    }
    const path = formatPath(issue.path) || '(root)';
    const fromEnv = envSources.get(path);
    problems.push(`${path}${fromEnv ? ` (from ${fromEnv})` : ''}: ${issue.code === 'invalid_union' ? unionMessage(issue) : issue.message}`);
  }
  return problems;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

/** Validates a raw object (already merged with env overrides) into a Config. */
/** `overrides` (dotted path -> value, e.g. from CLI flags) apply last, after the environment. */
export function parseConfig(raw: unknown, source = 'config', env: NodeJS.ProcessEnv = {}, overrides: Record<string, unknown> = {}): Config {
  const input: unknown = raw ?? {};
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw new ConfigError(source, ['(root): expected an object of settings']);
  }
  const merged = structuredClone(input) as Record<string, unknown>;
  const envSources = new Map<string, string>();
  for (const [variable, path] of Object.entries(ENV_OVERRIDES)) {
    const value = env[variable];
    if (value === undefined || value === '') continue;
    setPath(merged, path, value);
    envSources.set(path.join('.'), variable);
  }
  for (const [path, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    setPath(merged, path.split('.'), value);
    envSources.set(path, 'command line');
  }
  // The variables of the backend the file picks (WebArena's site URLs for a webarena campaign).
  const environment = (merged.campaign as { environment?: { backend?: unknown } } | undefined)?.environment;
  const backend = findBackend(environment?.backend);
  if (backend?.envOverrides) {
    for (const [variable, path] of Object.entries(backend.envOverrides)) {
      const value = env[variable];
      if (value === undefined || value === '') continue;
      setPath(merged, path, value);
      envSources.set(path.join('.'), variable);
    }
  }
  const result = ConfigSchema.safeParse(merged);
  if (!result.success) throw new ConfigError(source, describeIssues(result.error, envSources, backend?.name));
  return result.data;
}

/** Reads a campaign file (YAML or JSON; no file means all defaults) and applies the environment. */
export async function loadConfig(file?: string, env: NodeJS.ProcessEnv = process.env, overrides: Record<string, unknown> = {}): Promise<Config> {
  if (!file) return parseConfig({}, 'defaults + environment', env, overrides);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(file, [`cannot read the file: ${(error as NodeJS.ErrnoException).code ?? error}`]);
  }
  let raw: unknown;
  try {
    raw = extname(file) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError(file, [`not valid ${extname(file) === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message}`]);
  }
  // An empty file is more likely a mistake (the wrong file, a failed write) than a wish for defaults.
  if (raw === null || raw === undefined || (typeof raw === 'object' && !Array.isArray(raw) && Object.keys(raw).length === 0)) {
    throw new ConfigError(file, ['(root): the campaign file is empty; it needs at least campaign.name (leave out -c for all defaults)']);
  }
  return parseConfig(raw, file, env, overrides);
}
