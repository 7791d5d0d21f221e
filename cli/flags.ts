/**
 * Flags several commands share: where the local stack lives and listens (`stack`, `campaign run`,
 * `worker`) and where a browser worker serves the embedded sites (`campaign run`, `worker`), so the
 * fix a port-conflict message names works on the command that hit it.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { EMBEDDED_SITE_NAMES, type EmbeddedSiteName } from '../env/siteUrls';

export interface StackFlags {
  config?: string;
  dataDir?: string;
  temporalPort?: string;
  temporalUiPort?: string;
  minioPort?: string;
  minioConsolePort?: string;
}

export interface SitePortFlags {
  sitePorts?: Partial<Record<EmbeddedSiteName, number>>;
}

/** `shopping=7770,reddit=9999` -> port per site. */
export function parseSitePorts(value: string, flag = '--site-ports'): Partial<Record<EmbeddedSiteName, number>> {
  const ports: Partial<Record<EmbeddedSiteName, number>> = {};
  for (const pair of value.split(',').filter(Boolean)) {
    const [site, port] = pair.split('=');
    if (!site || !(EMBEDDED_SITE_NAMES as readonly string[]).includes(site) || !/^\d+$/.test(port ?? '')) {
      throw new Error(`${flag} takes SITE=PORT pairs for ${EMBEDDED_SITE_NAMES.join(', ')}; got ${pair}`);
    }
    ports[site as EmbeddedSiteName] = Number(port);
  }
  return ports;
}

function numberOrText(value: string | undefined): number | string | undefined {
  if (value === undefined) return undefined;
  return /^\d+$/.test(value) ? Number(value) : value;
}

export function withStackFlags(command: Command): Command {
  return command
    .option('--data-dir <dir>', 'state directory of the local stack (default .webrl)')
    .option('--temporal-port <port>', 'Temporal gRPC port (default 7233)')
    .option('--temporal-ui-port <port>', 'Temporal web UI port (default 8233)')
    .option('--minio-port <port>', 'MinIO S3 port (default 9000)')
    .option('--minio-console-port <port>', 'MinIO console port (default 9001)');
}

export function withSitePortFlags(command: Command): Command {
  return command.option(
    '--site-ports <pairs>',
    `ports of the embedded sites, SITE=PORT pairs for ${EMBEDDED_SITE_NAMES.join(', ')} (default: sites.ports)`,
    (value: string) => parseSitePorts(value),
  );
}

/** The config overrides the stack flags stand for (unset flags override nothing). */
export function stackOverrides(flags: StackFlags): Record<string, unknown> {
  return {
    'stack.dataDir': flags.dataDir,
    'stack.temporalPort': numberOrText(flags.temporalPort),
    'stack.temporalUiPort': numberOrText(flags.temporalUiPort),
    'stack.minioPort': numberOrText(flags.minioPort),
    'stack.minioConsolePort': numberOrText(flags.minioConsolePort),
  };
}

export function sitePortOverrides(flags: SitePortFlags): Record<string, unknown> {
  return Object.fromEntries(Object.entries(flags.sitePorts ?? {}).map(([site, port]) => [`sites.ports.${site}`, port]));
}

export interface OutageFlags {
  /** Seconds. */
  outageLimit: number;
}

/** How long a long-running command waits for Temporal or storage to answer again (default a day). */
export function withOutageFlag(command: Command): Command {
  return command.option(
    '--outage-limit <seconds>',
    'how long to wait for Temporal or storage to answer again before giving up',
    (value: string) => {
      if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('expected a whole number of seconds');
      return Number(value);
    },
    86_400,
  );
}
