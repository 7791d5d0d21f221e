/**
 * The README's commands exist: every `sh` block of its Quick start and Command line sections is read,
 * each `webrl` command (and `npm run campaign -- ...`, which is `webrl campaign run ...`) is resolved
 * to its subcommand, and each flag it uses must be listed by that subcommand's help; each npm script
 * it names must be in package.json. The README stays under 20 KB.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import type { Command } from 'commander';
import { createProgram } from '../cli/program';

const README = new URL('../README.md', import.meta.url);
const PACKAGE = new URL('../package.json', import.meta.url);

/** The fenced `sh` blocks of one `## ` section. */
function shBlocks(readme: string, section: string): string[] {
  const start = readme.indexOf(`\n## ${section}\n`);
  assert.ok(start >= 0, `the README has a '${section}' section`);
  const end = readme.indexOf('\n## ', start + 1);
  const text = readme.slice(start, end < 0 ? undefined : end);
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** Each command of a block: comments dropped, `&&` chains split, `export` lines skipped. */
function commandsOf(block: string): string[][] {
  return block
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter((line) => line && !line.startsWith('export '))
    .flatMap((line) => line.split('&&').map((part) => part.trim().split(/\s+/)));
}

/** The deepest subcommand the words name, and the words after it. */
function resolve(program: Command, words: string[]): { command: Command; path: string[]; rest: string[] } {
  let command = program;
  const path: string[] = [];
  let i = 0;
  for (; i < words.length; i++) {
    const next = command.commands.find((c) => c.name() === words[i]);
    if (!next) break;
    command = next;
    path.push(words[i]!);
  }
  return { command, path, rest: words.slice(i) };
}

test('every command in the README exists with the flags it is shown with', async () => {
  const readme = await readFile(README, 'utf8');
  const scripts = (JSON.parse(await readFile(PACKAGE, 'utf8')) as { scripts: Record<string, string> }).scripts;
  const program = createProgram();
  const commands = [...shBlocks(readme, 'Quick start'), ...shBlocks(readme, 'Command line'), ...shBlocks(readme, 'Scale-out')].flatMap(commandsOf);
  assert.ok(commands.length >= 20, `found ${commands.length} commands`);
  for (const words of commands) {
    let webrlWords: string[];
    if (words[0] === 'npm') {
      if (words[1] === 'ci') continue;
      const script = words[1] === 'run' ? words[2]! : words[1]!;
      assert.ok(script in scripts, `npm script '${script}' exists (${words.join(' ')})`);
      if (script !== 'campaign') continue;
      const separator = words.indexOf('--');
      webrlWords = ['campaign', 'run', ...(separator < 0 ? [] : words.slice(separator + 1))];
    } else {
      assert.equal(words[0], 'webrl', `a README command is webrl or npm: ${words.join(' ')}`);
      webrlWords = words.slice(1);
    }
    const { command, path, rest } = resolve(program, webrlWords);
    assert.ok(path.length > 0, `'webrl ${webrlWords.join(' ')}' names a subcommand`);
    const text = command.helpInformation();
    for (const flag of rest.filter((word) => word.startsWith('-')).map((word) => word.split('=')[0]!)) {
      assert.match(text, new RegExp(`(^|[\\s,])${flag.replace(/[-]/g, '\\-')}\\b`, 'm'), `'webrl ${path.join(' ')}' takes ${flag}`);
    }
  }
});

test('the README is a manual of under 20 KB; the research notes live in docs/', async () => {
  const readme = await readFile(README);
  assert.ok(readme.length < 20 * 1024, `README.md is ${readme.length} bytes`);
  for (const link of (readme.toString().match(/\]\((docs\/[^)]+)\)/g) ?? []).map((l) => l.slice(2, -1))) {
    await readFile(new URL(`../${link}`, import.meta.url));
  }
});
