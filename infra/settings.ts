/**
 * Config plus secrets, as every entry point (CLI, workers) needs them: the campaign file and
 * environment for settings, the environment (or the local stack's generated credentials) for secrets.
 */
import type { Config } from '../config/campaignConfig';
import { loadConfig } from '../config/load';
import { SECRET_ENV, loadSecrets, type S3Credentials, type Secrets } from '../config/secrets';
import { localStackCredentials, targetsLocalStack } from './stack';

export interface Settings {
  config: Config;
  secrets: Secrets;
}

export async function loadSettings(file?: string, env: NodeJS.ProcessEnv = process.env, overrides: Record<string, unknown> = {}): Promise<Settings> {
  const config = await loadConfig(file, env, overrides);
  return withLocalStackCredentials({ config, secrets: loadSecrets(env) });
}

/**
 * With no S3 keys in the environment and S3 on the local stack, the stack's generated credentials.
 * The main job calls it again after bringing the stack up, since a fresh stack makes them only then.
 */
export async function withLocalStackCredentials(settings: Settings): Promise<Settings> {
  if (settings.secrets.s3 || !targetsLocalStack(settings.config)) return settings;
  const s3 = await localStackCredentials(settings.config, { create: false });
  return s3 ? { ...settings, secrets: { ...settings.secrets, s3 } } : settings;
}

/**
 * The S3 keys to start the local MinIO with: the environment's when it sets them, else none, so the
 * stack generates (or reuses) its own. `settings.secrets.s3` alone cannot tell: it may hold those.
 */
export function environmentS3Credentials(settings: Settings, env: NodeJS.ProcessEnv = process.env): S3Credentials | undefined {
  return env[SECRET_ENV.s3AccessKeyId] ? settings.secrets.s3 : undefined;
}
