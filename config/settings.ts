/**
 * Config plus secrets, as every entry point (CLI, workers) needs them: the campaign file and
 * environment for settings, the environment (or the local stack's generated credentials) for secrets.
 */
import { localStackCredentials, targetsLocalStack } from '../infra/stack';
import { loadConfig } from './load';
import type { Config } from './schema';
import { loadSecrets, SECRET_ENV, type Secrets } from './secrets';

export interface Settings {
  config: Config;
  secrets: Secrets;
}

export async function loadSettings(
  file?: string,
  env: NodeJS.ProcessEnv = process.env,
  overrides: Record<string, unknown> = {},
): Promise<Settings> {
  const config = await loadConfig(file, env, overrides);
  const envHasKeys = Boolean(env[SECRET_ENV.s3AccessKeyId]);
  const fallback = !envHasKeys && targetsLocalStack(config) ? await localStackCredentials(config, { create: false }) : undefined;
  return { config, secrets: loadSecrets(env, fallback) };
}
