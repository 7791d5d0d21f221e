/**
 * Icon-only controls drawn with CSS `content: url(...)` (MiniWoB++'s email-inbox trash, star, reply and
 * forward icons: `<span class="trash">` styled `content: url(.../delete.png)`) are named from the
 * image's file name in both observation profiles, as background and mask images already are; and so is
 * one on the real email-inbox page of MiniWoB++.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { observe } from '../../browser/observe';
import { serveDirectory } from '../../browser/staticServer';
import { launchChromium, newContext } from './helpers';
import { prepareMiniwobContext } from '../../env/backends/miniwob/episode';
import { ensureMiniwobPages } from '../../env/backends/miniwob/package';

let browser: Browser;
before(async () => {
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

const PAGE = `<!doctype html><html><head><style>
  .trash { content: url("http://127.0.0.1:9/icons/delete.png"); width: 16px; height: 16px; display: inline-block; }
  .star { width: 16px; height: 16px; display: inline-block; }
  .star::before { content: url(http://127.0.0.1:9/icons/star-clicked.png); }
  .caption::before { content: "not an icon"; }
</style></head><body>
  <span class="trash" onclick="void 0"></span>
  <span class="star" onclick="void 0"></span>
  <button class="caption"></button>
</body></html>`;

test('an element (or its pseudo-element) drawn with content: url(...) is named by the file name in both profiles', async () => {
  const context = await newContext(browser);
  try {
    const page = await context.newPage();
    await page.setContent(PAGE);
    const plain = await observe(page, 'default');
    assert.match(plain.html, /<span id="\d+" data-label="delete"[^>]*>/);
    assert.match(plain.html, /<span id="\d+" data-label="star clicked"[^>]*>/);
    const webrl = await observe(page, 'webrl');
    assert.match(webrl.html, /<span id="\d+" title="delete"[^>]*>/);
    assert.match(webrl.html, /<span id="\d+" title="star clicked"[^>]*>/);
    assert.ok(!/data-label="not an icon"|title="not an icon"/.test(plain.html + webrl.html));
  } finally {
    await context.close();
  }
});

test("MiniWoB++'s email-inbox icons are named", async () => {
  const pages = await ensureMiniwobPages();
  const server = await serveDirectory(pages.root);
  const context = await newContext(browser);
  try {
    await prepareMiniwobContext(context, 5, null);
    const page = await context.newPage();
    await page.goto(`${server.url}/miniwob/email-inbox.html?seed=5`);
    // Open the first email: its back arrow, trash and star icons show (Reply and Forward have text).
    await page.locator('.email-thread').first().click();
    for (const profile of ['default', 'webrl'] as const) {
      const { html } = await observe(page, profile);
      const name = profile === 'webrl' ? 'title' : 'data-label';
      for (const icon of ['left arrow white', 'delete', 'star'])
        assert.match(html, new RegExp(`<span id="\\d+" ${name}="${icon}"`), `${profile}: ${icon} in ${html}`);
    }
  } finally {
    await context.close();
    await server.close();
  }
});
