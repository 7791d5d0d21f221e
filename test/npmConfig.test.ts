/**
 * `npm ci` on a fresh clone prints no warning the project causes: its .npmrc holds only keys npm
 * knows, and every dependency install script is reviewed in package.json's allowScripts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const npm = async (...args: string[]) => {
  const { stdout, stderr } = await promisify(execFile)('npm', args, { cwd: ROOT });
  return stdout + stderr;
};

test("the project's .npmrc has no key npm calls unknown", async () => {
  assert.doesNotMatch(await npm('config', 'get', 'fund'), /Unknown project config/);
});

test('no dependency install script is left unreviewed (npm ci would list them)', async () => {
  assert.match(await npm('install-scripts', 'ls'), /No packages with unreviewed install scripts/);
});
