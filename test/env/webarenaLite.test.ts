/**
 * The real WebArena-Lite test file: all 165 tasks load and build their evaluators, and the
 * evaluators' verdicts on hand-made page states (fixture pages served by request interception at
 * the placeholder URLs, exit answers, final URLs) match WebArena-Lite's semantics.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, ensureChromium } from '../../infra/tools';
import { DeterministicJudge } from '../../env/evaluators/judge';
import { buildTasks, countTasks, readTaskFile, type LoadedTask } from '../../env/tasks/loader';
import { WEBARENA_DEFAULT_SITE_URLS } from '../../env/siteUrls';
import { Secret } from '../../config/secrets';
import { WEBARENA_LITE_TEST_FILE } from '../harness/data';
import { startServer } from '../models/fixtures/servers';

const U = WEBARENA_DEFAULT_SITE_URLS;

describe('WebArena-Lite task file', () => {
  let tasks: LoadedTask[] = [];
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** URL (without trailing slash) -> fixture HTML for the current check. */
  let fixtures = new Map<string, string>();

  before(async () => {
    const configs = await readTaskFile(WEBARENA_LITE_TEST_FILE);
    tasks = buildTasks(configs, { siteUrls: U, judge: new DeterministicJudge() });
    browser = await chromium.launch({ executablePath: (await ensureChromium()).path, args: CHROMIUM_ARGS });
    context = await browser.newContext();
    await context.route('**/*', (route) => {
      const url = route.request().url().replace(/\/$/, '');
      const body = fixtures.get(url);
      return route.fulfill({
        status: body === undefined ? 404 : 200,
        contentType: 'text/html; charset=utf-8',
        body: body ?? '<html><body>Not found</body></html>',
      });
    });
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
  });

  const task = (id: number): LoadedTask => {
    const found = tasks.find((t) => t.config.task_id === id);
    if (!found) throw new Error(`no task ${id}`);
    return found;
  };
  /** Serves `pages` (URL -> body HTML) and opens the first as the episode's final page. */
  async function showPages(pages: Record<string, string>): Promise<void> {
    fixtures = new Map(Object.entries(pages).map(([url, body]) => [url.replace(/\/$/, ''), `<!DOCTYPE html><html><body>${body}</body></html>`]));
    const first = Object.keys(pages)[0];
    if (first) await page.goto(first);
  }
  const score = (id: number, answer: string | null) => task(id).evaluator.evaluate(page, answer);

  test('all 165 tasks load and build, with the published counts', async () => {
    assert.equal(tasks.length, 165);
    const counts = countTasks(tasks.map((t) => t.config));
    assert.deepEqual(counts.byEvalType, { string_match: 80, url_match: 39, program_html: 67 });
    assert.equal(counts.bySite.map, 31);
  });

  test('string_match: must_include lists, the single-token rule, |OR|, a lone string, exact N/A', async () => {
    await showPages({ [`${U.shopping_admin}/`]: 'dashboard' });
    assert.equal(await score(0, 'Impulse Duffle, Overnight Duffle and Hawkeye Yoga Short-32-Blue'), 1);
    assert.equal(await score(0, 'Impulse Duffle, Overnight Duffle'), 0);
    assert.equal(await score(2, '2'), 1);
    assert.equal(await score(2, '12'), 0);
    assert.equal(await score(94, 'I count 3'), 1);
    assert.equal(await score(94, 'I count 4'), 0);
    assert.equal(await score(81, 'It was yjlou'), 1);
    assert.equal(await score(27, '"N/A"'), 1);
    assert.equal(await score(27, 'There is a negative review'), 0);
    assert.equal(await score(27, null), 0);
  });

  test('string_match + url_match (EXACT): answer and final URL both count', async () => {
    const issue = `${U.gitlab}/a11yproject/a11yproject.com/-/issues/719/`;
    await showPages({ [issue]: '<h1>Issue</h1>' });
    assert.equal(await score(45, 'Yes'), 1);
    assert.equal(await score(45, 'No'), 0);
    await showPages({ [`${U.gitlab}/a11yproject/a11yproject.com/-/issues/7190`]: '<h1>Other issue</h1>' });
    assert.equal(await score(45, 'Yes'), 0);
  });

  test('url_match GOLD in PRED: the reference must be a substring of the final URL', async () => {
    await showPages({ [`${U.gitlab}/dashboard/todos?state=pending`]: 'todos' });
    assert.equal(await score(9, null), 1);
    await showPages({ [`${U.gitlab}/dashboard/issues`]: 'issues' });
    assert.equal(await score(9, null), 0);
  });

  test('program_html: literal URL + document. locator with exact_match', async () => {
    const profile = `${U.reddit}/user/MarvelsGrantMan136`;
    await showPages({ [`${U.reddit}/`]: 'front', [profile]: '<div class="user-bio__biography">Seeking SDE positions</div>' });
    assert.equal(await score(97, null), 1);
    await showPages({ [`${U.reddit}/`]: 'front', [profile]: '<div class="user-bio__biography">Seeking SDE roles</div>' });
    assert.equal(await score(97, null), 0);
  });

  test('program_html: vote form class must_include', async () => {
    const post = `${U.reddit}/f/books/124260/adults-reading-to-each-other-out-loud`;
    const vote = (cls: string) => `<div class="submission__vote"><form class="${cls}"><button>up</button></form></div>`;
    await showPages({ [`${U.reddit}/`]: 'front', [post]: vote('vote vote--user-upvoted') });
    assert.equal(await score(98, null), 1);
    await showPages({ [`${U.reddit}/`]: 'front', [post]: vote('vote') });
    assert.equal(await score(98, null), 0);
  });

  test('program_html: locator helper gitlab_get_project_memeber_role reads the members table', async () => {
    const members = `${U.gitlab}/byteblaze/dotfiles/-/project_members`;
    const row = (user: string, role: string) =>
      `<tr><td data-label="Account"><span class="gl-avatar-labeled-label">${user}</span><span class="gl-avatar-labeled-sublabel">@${user}</span></td><td class="col-max-role"><span>${role}</span></td></tr>`;
    await showPages({ [`${U.gitlab}/`]: 'home', [members]: `<table>${row('byteblaze', 'Owner')}${row('vinta', 'Guest')}</table>` });
    assert.equal(await score(112, null), 1);
    await showPages({ [`${U.gitlab}/`]: 'home', [members]: `<table>${row('byteblaze', 'Owner')}${row('vinta', 'Developer')}</table>` });
    assert.equal(await score(112, null), 0);
  });

  test("program_html: URL helper shopping_get_latest_order_url asks the shop's REST API for the newest order", async () => {
    // The helper talks to the shop over HTTP (Node, not the browser): a stub shop on a free port
    // answers the token and order calls; the browser's pages still come from the fixtures.
    const shop = await startServer((request) => {
      if (request.method === 'POST' && request.url === '/rest/default/V1/integration/admin/token') {
        const body = request.body as { username?: string; password?: string };
        return body.username === 'admin' && body.password === 'pw' ? { json: 'tok' } : { status: 401, json: { message: 'no' } };
      }
      if (request.url.startsWith('/rest/V1/orders?') && request.headers.authorization === 'Bearer tok')
        return { json: { items: [{ increment_id: '000000191' }], total_count: 1 } };
      return { status: 404, json: { message: 'not found' } };
    });
    try {
      const urls = { ...U, shopping: shop.url };
      const [evaluator] = buildTasks([task(104).config], {
        siteUrls: urls,
        judge: new DeterministicJudge(),
        shopAdmin: { username: new Secret('admin'), password: new Secret('pw') },
      });
      const order = `${shop.url}/sales/order/view/order_id/191/`;
      await showPages({ [`${shop.url}/`]: 'home', [order]: '<div class="order-details-items ordered">Makeup remover B0738JQG6Q Ordered 1</div>' });
      assert.equal(await evaluator!.evaluator.evaluate(page, null), 1);
      assert.equal(page.url(), order);
      await showPages({ [`${shop.url}/`]: 'home', [order]: '<div class="order-details-items ordered">Something else B000000000</div>' });
      assert.equal(await evaluator!.evaluator.evaluate(page, null), 0);
      const orderQuery = new URL(shop.requests.find((r) => r.url.startsWith('/rest/V1/orders'))!.url, shop.url).searchParams;
      assert.equal(orderQuery.get('searchCriteria[sortOrders][0][field]'), 'created_at');
      assert.equal(orderQuery.get('searchCriteria[sortOrders][0][direction]'), 'DESC');
      assert.equal(orderQuery.get('searchCriteria[pageSize]'), '1');
    } finally {
      await shop.close();
    }
  });

  test('url_match + program_html with reddit_get_post_url(__last_url__)', async () => {
    const comment = `${U.reddit}/f/nyc/200/is-car-necessary-in-nyc#comment_5`;
    const post = `${U.reddit}/f/nyc/200/`;
    const body = '<div class="submission__inner"><h1>Is car necessary in NYC?</h1></div>';
    await showPages({ [comment]: body, [post]: body });
    assert.equal(await score(133, null), 1);
    await showPages({ [`${U.reddit}/f/cars/200/is-car-necessary-in-nyc`]: body, [`${U.reddit}/f/cars/200/`]: body });
    assert.equal(await score(133, null), 0);
  });

  test('program_html: checkbox state, form values on the last page, page HTML', async () => {
    const manage = `${U.shopping}/newsletter/manage/`;
    await showPages({ [`${U.shopping}/`]: 'home', [manage]: '<input type="checkbox" title="General Subscription" checked>' });
    assert.equal(await score(121, null), 1);
    await showPages({ [`${U.shopping}/`]: 'home', [manage]: '<input type="checkbox" title="General Subscription">' });
    assert.equal(await score(121, null), 0);

    const report = `${U.shopping_admin}/reports/report_sales/sales/?from=2%2F1%2F23`;
    await showPages({ [report]: '<input id="sales_report_from" value="2/1/23"><input id="sales_report_to" value="2/28/23">' });
    assert.equal(await score(149, null), 1);
    await showPages({ [report]: '<input id="sales_report_from" value="2/1/23"><input id="sales_report_to" value="3/1/23">' });
    assert.equal(await score(149, null), 0);

    await showPages({ [`${U.shopping}/catalogsearch/result/?q=mouth+guard`]: '<p>Mouth Guard for Jaw Bruxism, night use</p>' });
    assert.equal(await score(29, null), 1);
    await showPages({ [`${U.shopping}/catalogsearch/result/?q=pillow`]: '<p>Pillow</p>' });
    assert.equal(await score(29, null), 0);
  });

  test('program_html fuzzy_match goes through the judge (deterministic here)', async () => {
    const contact = `${U.shopping}/contact/`;
    const form = (text: string) => `<textarea title="What’s on your mind?">${text}</textarea>`;
    await showPages({ [contact]: form('I want a refund for order 000000180: it broke after three days of use. I paid $12.99.') });
    assert.equal(await score(123, null), 1);
    await showPages({ [contact]: form('Hello, nice shop.') });
    assert.equal(await score(123, null), 0);
  });
});
