/**
 * A campaign's config as it is frozen in storage when the campaign starts: the exact bytes, their
 * sha256 (carried by the workflow input, every activity's scope and every phase manifest, so all of
 * them provably ran under one config), and a field-by-field comparison for refusing a second start
 * under the same name with another config.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Config } from './campaignConfig';

export function frozenConfigBytes(config: Config): string {
  return `${JSON.stringify(config, null, 2)}\n`;
}

export function configSha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Dotted paths of the leaves where `a` and `b` differ (arrays compared whole), in a stable order. */
export function differingFields(a: unknown, b: unknown, path = ''): string[] {
  const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
  if (!isObject(a) || !isObject(b)) return isDeepStrictEqual(a, b) ? [] : [path || '(root)'];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.flatMap((key) => differingFields(a[key], b[key], path ? `${path}.${key}` : key));
}
