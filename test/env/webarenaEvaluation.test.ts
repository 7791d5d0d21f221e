/**
 * WebArena's whole evaluation harness. The original 812-task test set and WebArena-Lite's 165 tasks
 * validate with every evaluator built (library and `webrl tasks validate`); a bad file has every
 * problem reported at once. Then each eval type, rule and helper of the original harness runs on
 * real pages of the served embedded sites (episodes with their own state, the agent's actions done
 * in the browser), the LLM judge behind a local OpenAI-compatible chat server that answers WebArena's
 * prompts, and the shop helpers over real HTTP against the embedded shop's REST API.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { registerTaskCommands } from '../../cli/tasks';
import { startEmbeddedSites, type EmbeddedSites } from '../../env/embeddedSites';
import { buildEvaluator, type EvaluatorOptions } from '../../env/evaluators/harnesses/registry';
import { DeterministicJudge, LlmJudge } from '../../env/evaluators/judge';
import { localEpisodeControl } from '../../env/http/siteServer';
import { projectPath } from '../../env/sites/gitlab/data';
import { EMBEDDED_SHOP_ADMIN, EMBEDDED_SHOP_ADMIN_ACCOUNT } from '../../env/sites/shopping/rest';
import { EPISODE_COOKIE } from '../../env/state/episodes';
import { WEBARENA_DEFAULT_SITE_URLS } from '../../env/siteUrls';
import { parseTasks, validateTaskFile } from '../../env/tasks/loader';
import { buildWorld } from '../../env/world';
import { CHROMIUM_ARGS, ensureChromium } from '../../infra/tools';
import { runWebrlInProcess } from '../harness/cli';
import { WEBARENA_LITE_TEST_FILE, WEBARENA_TEST_FILE } from '../harness/data';
import { startJudgeServer, type JudgeServer } from '../harness/judgeServer';

/** Runs `webrl tasks ARGS` in this process; returns what it printed and the exit code. */
const webrl = (...args: string[]) => runWebrlInProcess(registerTaskCommands, ...args);

const FUZZY_TASKS = 118;
const UA_TASKS = 36;

describe('WebArena task files validate', () => {
  let judge: JudgeServer;
  let dir: string;
  let judgeConfig: string;
  before(async () => {
    judge = await startJudgeServer();
    dir = await mkdtemp(join(tmpdir(), 'webrl-webarena-'));
    judgeConfig = join(dir, 'judge.yaml');
    await writeFile(judgeConfig, `models:\n  judge: { backend: chat, baseUrl: "${judge.baseURL}", model: judge-model }\n`);
  });
  after(async () => {
    await judge.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("every task of both files builds its evaluator: the original set under WebArena's harness with an LLM judge, Lite's under Lite's", async () => {
    const llm = new LlmJudge({ baseURL: judge.baseURL, model: 'judge-model' });
    const original = await validateTaskFile(WEBARENA_TEST_FILE, { siteUrls: WEBARENA_DEFAULT_SITE_URLS, judge: llm, harness: 'webarena' });
    assert.deepEqual(
      original.problems.map((p) => p.message),
      [],
    );
    assert.equal(original.total, 812);
    assert.equal(original.tasks.length, 812);
    assert.deepEqual(original.counts.byEvalType, { program_html: 411, string_match: 335, url_match: 205 });
    const lite = await validateTaskFile(WEBARENA_LITE_TEST_FILE, { siteUrls: WEBARENA_DEFAULT_SITE_URLS, judge: llm, requireLlmJudge: true });
    assert.deepEqual(
      lite.problems.map((p) => p.message),
      [],
    );
    assert.equal(lite.tasks.length, 165);
    // The deterministic default still builds both files (the embedded campaign's judge).
    for (const file of [WEBARENA_TEST_FILE, WEBARENA_LITE_TEST_FILE]) {
      assert.deepEqual((await validateTaskFile(file, { siteUrls: WEBARENA_DEFAULT_SITE_URLS, judge: new DeterministicJudge() })).problems, []);
    }
    assert.equal(judge.requests.length, 0, 'validation never calls the judge');
  });

  test('without an LLM judge, every task WebArena grades with one is reported, naming the task and field', async () => {
    const report = await validateTaskFile(WEBARENA_TEST_FILE, { siteUrls: WEBARENA_DEFAULT_SITE_URLS, judge: new DeterministicJudge(), harness: 'webarena' });
    assert.equal(report.problems.length, FUZZY_TASKS);
    assert.equal(report.invalid, FUZZY_TASKS);
    assert.ok(report.problems.every((p) => p.field === 'eval.reference_answers.fuzzy_match'));
    assert.equal(report.problems.filter((p) => p.problem.startsWith('ua_match needs an LLM judge')).length, UA_TASKS);
    assert.ok(report.problems.some((p) => p.taskId === 16 && /^fuzzy_match needs an LLM judge and none is configured/.test(p.problem)));
    assert.equal(report.tasks.length, 812 - FUZZY_TASKS);
  });

  test('webrl tasks validate accepts both files and names the harness and judge', async () => {
    const lite = await webrl('tasks', 'validate', WEBARENA_LITE_TEST_FILE, '--require-llm-judge', '-c', judgeConfig);
    assert.equal(lite.exitCode, 0, lite.err);
    assert.match(lite.out, /165 tasks, all evaluators built \(harness webarena-lite, LLM judge http:\/\/127\.0\.0\.1:\d+\/v1 \(model judge-model\)\)/);
    const original = await webrl('tasks', 'validate', WEBARENA_TEST_FILE, '--harness', 'webarena', '-c', judgeConfig);
    assert.equal(original.exitCode, 0, original.err);
    assert.match(original.out, /812 tasks, all evaluators built \(harness webarena, LLM judge/);
    assert.match(original.out, /wikipedia\s+23/);
    assert.match(original.out, /program_html\s+411/);
    const plain = await webrl('tasks', 'validate', WEBARENA_TEST_FILE);
    assert.equal(plain.exitCode, 0, plain.err);
    assert.match(plain.out, /812 tasks, all evaluators built \(harness webarena-lite, deterministic judge\)/);
  });

  test('webrl tasks validate --harness webarena without a judge lists each LLM-graded task, then the count', async () => {
    const { err, exitCode } = await webrl('tasks', 'validate', WEBARENA_TEST_FILE, '--harness', 'webarena');
    assert.equal(exitCode, 1);
    const lines = err.split('\n');
    assert.equal(lines.filter((l) => /^task \d+: eval\.reference_answers\.fuzzy_match: (fuzzy|ua)_match needs an LLM judge/.test(l)).length, FUZZY_TASKS);
    assert.match(lines.at(-1)!, new RegExp(`^invalid task file .*: ${FUZZY_TASKS} of 812 tasks invalid \\(${FUZZY_TASKS} problems, harness webarena\\)$`));
  });

  test('a file with several bad tasks has every one reported, with its id and field', async () => {
    const base = (id: number, evaluation: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      sites: ['shopping'],
      task_id: id,
      start_url: '__SHOPPING__',
      intent: `task ${id}`,
      eval: { eval_types: ['program_html'], reference_answers: null, reference_url: '', program_html: [], ...evaluation },
      ...extra,
    });
    const target = (url: string, locator: string) => ({ url, locator, required_contents: { must_include: ['x'] } });
    const tasks = [
      base(1, { program_html: [target('last', "func:shopping_get_sku_latest_review_title('B0')")] }),
      base(2, { program_html: [target("func:reddit_get_latest_post('x')", '#css-selector')] }),
      base(3, { eval_types: ['string_match', 'visual_match'] }),
      base(4, { eval_types: ['string_match'], reference_answers: { fuzzy_match: ['yes'] } }),
      base(5, { program_html: [target('last', '')] }),
      base(1, { program_html: [target('last', '')] }),
      base(6, { eval_types: ['url_match'], reference_url: '__CLASSIFIEDS__/x', url_note: 'EXACT' }),
    ];
    const file = join(dir, 'bad.json');
    await writeFile(file, JSON.stringify(tasks));
    const { err, exitCode } = await webrl('tasks', 'validate', file, '--harness', 'webarena');
    assert.equal(exitCode, 1);
    const lines = err.split('\n');
    const expected = [
      /^task 3: eval\.eval_types\[1\]: /,
      /^task 1: task_id: duplicate task id$/,
      /^task 1: eval\.program_html\[0\]\.locator: unknown locator helper "shopping_get_sku_latest_review_title"/,
      /^task 2: eval\.program_html\[0\]\.url: unknown url helper "reddit_get_latest_post"/,
      /^task 2: eval\.program_html\[0\]\.locator: expected "", a document\. expression or func:helper/,
      /^task 4: eval\.reference_answers\.fuzzy_match: fuzzy_match needs an LLM judge/,
      /^task 6: eval\.url_note: WebArena's harness matches URLs by "GOLD in PRED" only/,
    ];
    for (const pattern of expected)
      assert.ok(
        lines.some((l) => pattern.test(l)),
        `${pattern} in\n${err}`,
      );
    assert.match(lines.at(-1)!, /: 5 of 7 tasks invalid \(7 problems, harness webarena\)$/);
  });
});

describe("WebArena's harness on the embedded sites' pages", () => {
  let sites: EmbeddedSites;
  let browser: Browser;
  let judgeServer: JudgeServer;
  let judge: LlmJudge;
  const world = buildWorld();
  const contexts: BrowserContext[] = [];
  const shopAdmin = EMBEDDED_SHOP_ADMIN_ACCOUNT;

  before(async () => {
    sites = await startEmbeddedSites();
    judgeServer = await startJudgeServer();
    judge = new LlmJudge({ baseURL: judgeServer.baseURL, model: 'judge-model', maxAttempts: 1 });
    browser = await chromium.launch({ executablePath: (await ensureChromium()).path, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
    await judgeServer?.close();
    await sites?.stop();
  });

  /** A page in a fresh episode of every embedded site (its own copy-on-write state). */
  async function episodePage(): Promise<Page> {
    const id = randomUUID();
    const origins = Object.values(sites.sites).map((site) => site.origin);
    for (const origin of origins) localEpisodeControl(origin)!.create(id);
    const context = await browser.newContext();
    contexts.push(context);
    await context.addCookies(origins.map((url) => ({ name: EPISODE_COOKIE, value: id, url })));
    return context.newPage();
  }

  let nextId = 1;
  /** One task through the task-file schema, evaluator built for the served sites. */
  function evaluator(
    evaluation: Record<string, unknown>,
    options: Partial<EvaluatorOptions> & { sites?: string[]; intent?: string; stringNote?: string } = {},
  ) {
    const [task] = parseTasks([
      {
        sites: options.sites ?? ['shopping'],
        task_id: nextId++,
        start_url: '__SHOPPING__',
        intent: options.intent ?? 'the task',
        eval: { reference_answers: null, reference_url: '', program_html: [], string_note: options.stringNote ?? '', ...evaluation },
      },
    ]);
    return buildEvaluator(task!, { siteUrls: sites.urls, judge, harness: 'webarena', shopAdmin, ...options });
  }
  const html = (url: string, locator: string, required_contents: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    eval_types: ['program_html'],
    program_html: [{ url, locator, required_contents, ...extra }],
  });

  test('string_match: exact_match on the trimmed answer, must_include with its lone-character rule, literal |OR|', async () => {
    const page = await episodePage();
    await page.goto(`${sites.urls.shopping}/`);
    const exact = evaluator({ eval_types: ['string_match'], reference_answers: { exact_match: 'Canceled' } });
    assert.equal(await exact.evaluate(page, '  "canceled"\n'), 1);
    assert.equal(await exact.evaluate(page, 'It was canceled'), 0);
    assert.equal(await exact.evaluate(page, null), 0);
    const lone = evaluator({ eval_types: ['string_match'], reference_answers: { must_include: ['2'] } });
    assert.equal(await lone.evaluate(page, 'There are 2 orders'), 1);
    assert.equal(await lone.evaluate(page, 'There are 12 orders'), 0);
    const several = evaluator({ eval_types: ['string_match'], reference_answers: { must_include: ['2', 'pending'] } });
    assert.equal(await several.evaluate(page, '12 pending'), 1, 'items of a longer list are plain substrings');
    const literalOr = evaluator({ eval_types: ['string_match'], reference_answers: { must_include: ['65 |OR| 3'] } });
    assert.equal(await literalOr.evaluate(page, '3'), 0, "WebArena's answers have no |OR|");
  });

  test('string_match fuzzy_match asks the LLM judge once per reference item; N/A passes as such or through ua_match with string_note', async () => {
    const page = await episodePage();
    await page.goto(`${sites.urls.shopping}/`);
    const fuzzy = evaluator(
      { eval_types: ['string_match'], reference_answers: { must_include: ['Hyatt'], fuzzy_match: ['driving: 2min', 'walking: 16min'] } },
      { intent: 'Compare the times' },
    );
    const before = judgeServer.requests.length;
    assert.equal(await fuzzy.evaluate(page, 'Hyatt hotel; Driving: 2min and walking: 16min'), 1);
    assert.equal(judgeServer.requests.length - before, 2, 'one judge request per reference item');
    const user = judgeServer
      .bodies()
      .at(-1)!
      .messages.find((m) => m.role === 'user')!.content;
    assert.match(user, /^reference answer: walking: 16min$/m);
    assert.match(user, /^student answer: hyatt hotel; driving: 2min and walking: 16min$/m, 'the judge sees the cleaned answer');
    assert.equal(await fuzzy.evaluate(page, 'Hyatt hotel; driving takes 5 hours'), 0);
    assert.equal(await fuzzy.evaluate(page, 'Marriott; driving: 2min, walking: 16min'), 0, 'must_include still counts');

    const ua = evaluator({ eval_types: ['string_match'], reference_answers: { fuzzy_match: 'N/A' } }, { stringNote: 'there is no order in processing' });
    const beforeUa = judgeServer.requests.length;
    assert.equal(await ua.evaluate(page, 'N/A'), 1);
    assert.equal(judgeServer.requests.length, beforeUa, 'an exact N/A needs no judge');
    assert.equal(await ua.evaluate(page, 'I cannot: no order is processing'), 1);
    assert.match(
      judgeServer
        .bodies()
        .at(-1)!
        .messages.find((m) => m.role === 'user')!.content,
      /^actual unachievable reason: there is no order in processing$/m,
    );
    assert.equal(await ua.evaluate(page, 'Your total is $12'), 0);
  });

  test("url_match: the site's own URL after the agent sorts satisfies a reference with its query in another order; |OR| alternatives", async () => {
    const page = await episodePage();
    const product = world.shopping.seed.catalog.products[0]!;
    const word = product.name.split(' ').at(-1)!.toLowerCase();
    await page.goto(`${sites.urls.shopping}/`);
    await page.fill('#search', word);
    await Promise.all([page.waitForURL(/catalogsearch/), page.click('#search_mini_form button')]);
    await Promise.all([page.waitForURL(/product_list_order=price/), page.selectOption('#sorter', { label: 'Price: high to low' })]);
    const sorted = evaluator({
      eval_types: ['url_match'],
      reference_url: `__SHOPPING__/catalogsearch/result/?product_list_dir=desc&q=${encodeURIComponent(word)}&product_list_order=price`,
      url_note: 'GOLD in PRED',
    });
    assert.equal(await sorted.evaluate(page, null), 1);
    const ascending = evaluator({
      eval_types: ['url_match'],
      reference_url: `__SHOPPING__/catalogsearch/result/?product_list_dir=asc&q=${encodeURIComponent(word)}`,
    });
    assert.equal(await ascending.evaluate(page, null), 0, 'a query value differs');
    const otherPath = evaluator({ eval_types: ['url_match'], reference_url: '__SHOPPING__/checkout/cart' });
    assert.equal(await otherPath.evaluate(page, null), 0);

    const forum = world.reddit.seed.forums[1]!.name;
    await page.goto(`${sites.urls.reddit}/f/${forum}/new`);
    const either = evaluator(
      { eval_types: ['url_match'], reference_url: `__REDDIT__/f/no_such_forum |OR| __REDDIT__/f/${forum}`, url_note: 'GOLD in PRED' },
      { sites: ['reddit'] },
    );
    assert.equal(await either.evaluate(page, null), 1);
    await page.goto(`${sites.urls.reddit}/forums`);
    assert.equal(await either.evaluate(page, null), 0);
  });

  test('program_html: literal URL, "" locator (the page HTML, entities unescaped) with must_include |OR|; exact_match on a JS value as Python prints it', async () => {
    const page = await episodePage();
    const category = world.shopping.seed.catalog.categories.find((c) => c.name.includes('&'))!;
    const pageHtml = html(`__SHOPPING__/${category.path}.html`, '', { must_include: [`No such words |OR| ${category.name}`, 'Sort By'] });
    assert.equal(await evaluator(pageHtml).evaluate(page, null), 1);
    assert.equal(await evaluator(pageHtml, { harness: 'webarena-lite' }).evaluate(page, null), 0, 'Lite compares the raw HTML, where & is &amp;');
    assert.equal(await evaluator(html(`__SHOPPING__/${category.path}.html`, '', { must_include: ['No such words |OR| Nor these'] })).evaluate(page, null), 0);

    // The agent subscribes to the newsletter in the browser; the check reads the box's state.
    const checked = evaluator(html('__SHOPPING__/newsletter/manage/', "document.querySelector('#subscription').checked", { exact_match: 'True' }));
    assert.equal(await checked.evaluate(page, null), 0, 'str(False) is "False"');
    await page.goto(`${sites.urls.shopping}/newsletter/manage/`);
    await page.check('#subscription');
    await Promise.all([page.waitForURL(/customer\/account/), page.click('button[title="Save"]')]);
    assert.equal(await checked.evaluate(page, null), 1);
    const missing = evaluator(html('last', "document.querySelector('#no-such-element').value", { exact_match: '' }));
    assert.equal(await missing.evaluate(page, null), 1, 'a locator that throws reads as ""');
  });

  test('program_html: prep_actions run before a JS locator, and stop at the first that throws', async () => {
    const page = await episodePage();
    await page.goto(`${sites.urls.shopping}/newsletter/manage/`);
    const locator = "document.querySelector('#subscription').checked";
    const click = "document.querySelector('#subscription').click()";
    assert.equal(await evaluator(html('last', locator, { exact_match: 'True' }, { prep_actions: [click] })).evaluate(page, null), 1);
    await page.reload();
    assert.equal(
      await evaluator(html('last', locator, { exact_match: 'False' }, { prep_actions: ["document.querySelector('#nope').click()", click] })).evaluate(
        page,
        null,
      ),
      1,
    );
  });

  test("program_html: func:reddit_get_post_url('__last_url__') opens the post the agent ended on; with url_match GOLD in PRED", async () => {
    const page = await episodePage();
    const post = world.reddit.seed.submissions[0]!;
    const other = world.reddit.seed.submissions.find((s) => s.forum !== post.forum)!;
    const check = evaluator(
      {
        eval_types: ['url_match', 'program_html'],
        reference_url: `__REDDIT__/f/${post.forum}`,
        url_note: 'GOLD in PRED',
        program_html: [
          {
            url: "func:reddit_get_post_url('__last_url__')",
            locator: "document.querySelector('.submission__inner').outerText",
            required_contents: { must_include: [post.title] },
          },
        ],
      },
      { sites: ['reddit'] },
    );
    await page.goto(`${sites.urls.reddit}/f/${post.forum}/${post.id}/${post.slug}#comments`);
    assert.equal(await check.evaluate(page, null), 1);
    assert.equal(page.url(), `${sites.urls.reddit}/f/${post.forum}/${post.id}/`, 'the helper cut the URL down to the post');
    await page.goto(`${sites.urls.reddit}/f/${other.forum}/${other.id}/${other.slug}`);
    assert.equal(await check.evaluate(page, null), 0);
  });

  test('program_html: func:gitlab_get_project_memeber_role reads the members table after the agent invites someone', async () => {
    const page = await episodePage();
    const project = world.gitlab.seed.projects[0]!;
    const outsider = world.gitlab.seed.users.find((u) => !project.members.some((m) => m.username === u.username))!;
    const members = `__GITLAB__/${projectPath(project)}/-/project_members`;
    const role = evaluator(html(members, `func:gitlab_get_project_memeber_role(__page__, '${outsider.username}')`, { must_include: ['Guest'] }), {
      sites: ['gitlab'],
    });
    assert.equal(await role.evaluate(page, null), 0, 'not a member yet: ""');
    await page.goto(`${sites.urls.gitlab}/${projectPath(project)}/-/project_members`);
    await page.fill('#invite_member_username', outsider.username);
    await page.selectOption('#invite_member_access_level', 'Guest');
    await page.click('[data-testid="invite-button"]');
    await page.getByText(/was added to the project as Guest/).waitFor();
    assert.equal(await role.evaluate(page, null), 1);
    const owner = project.members[0]!;
    const ownerRole = evaluator(html(members, `func:gitlab_get_project_memeber_role(__page__, '${owner.username}')`, { exact_match: owner.role }), {
      sites: ['gitlab'],
    });
    assert.equal(await ownerRole.evaluate(page, null), 1);
  });

  test("program_html: func:shopping_get_latest_order_url() finds the order the agent just placed, through the shop's REST API", async () => {
    const page = await episodePage();
    const product = world.shopping.seed.catalog.products.find(
      (p) => p.options.length === 0 && p.inStock && !world.shopping.seed.orders.some((o) => o.lines.some((l) => l.sku === p.sku)),
    )!;
    const check = evaluator(
      html('func:shopping_get_latest_order_url()', 'document.querySelector(".order-details-items.ordered").outerText', { must_include: [product.sku] }),
    );
    await page.goto(`${sites.urls.shopping}/`);
    assert.equal(await check.evaluate(page, null), 0, 'the newest seeded order does not hold the product');
    await page.goto(`${sites.urls.shopping}/${product.urlKey}.html`);
    await page.click('#product-addtocart-button');
    await page.getByText(/to your shopping cart/).waitFor();
    await page.goto(`${sites.urls.shopping}/checkout/`);
    await Promise.all([page.waitForURL(/success/), page.click('button[title="Place Order"]')]);
    const placed = Number(new URL(page.url()).searchParams.get('order_id'));
    assert.equal(await check.evaluate(page, null), 1);
    assert.equal(page.url(), `${sites.urls.shopping}/sales/order/view/order_id/${placed}/`);
    // Another episode (and the public state) never saw that order.
    assert.equal(await check.evaluate(await episodePage(), null), 0);
  });

  test('program_html: func:shopping_get_sku_latest_review_rating / _author read the review the agent just posted', async () => {
    const page = await episodePage();
    const product = world.shopping.seed.catalog.products.find((p) => world.shopping.seed.catalog.reviews.some((r) => r.productId === p.id))!;
    const seeded = world.shopping.seed.catalog.reviews
      .filter((r) => r.productId === product.id)
      .sort((a, b) => a.id - b.id)
      .at(-1)!;
    const check = evaluator({
      eval_types: ['program_html'],
      program_html: [
        { url: 'last', locator: `func:shopping_get_sku_latest_review_rating('${product.sku}')`, required_contents: { must_include: ['80'] } },
        { url: 'last', locator: `func:shopping_get_sku_latest_review_author('${product.sku}')`, required_contents: { must_include: ['ShoppingEmma'] } },
      ],
    });
    await page.goto(`${sites.urls.shopping}/${product.urlKey}.html`);
    assert.equal(await check.evaluate(page, null), 0);
    const seededCheck = evaluator(html('last', `func:shopping_get_sku_latest_review_author('${product.sku}')`, { exact_match: seeded.nickname }));
    assert.equal(await seededCheck.evaluate(page, null), 1, 'before posting, the latest review is the newest seeded one');
    await page.check('#Rating_4');
    await page.fill('#nickname_field', 'ShoppingEmma');
    await page.fill('#summary_field', 'Good');
    await page.fill('#review_field', 'Works as described.');
    await page.click('#review-form button[type="submit"]');
    await page.getByText('You submitted your review.').waitFor();
    assert.equal(await check.evaluate(page, null), 1);
    const noReviews = world.shopping.seed.catalog.products.find((p) => !world.shopping.seed.catalog.reviews.some((r) => r.productId === p.id))!;
    assert.equal(
      await evaluator(html('last', `func:shopping_get_sku_latest_review_rating('${noReviews.sku}')`, { exact_match: '' })).evaluate(page, null),
      1,
      '"" without reviews',
    );
  });

  test('the shop helpers need the admin account, which never appears in their errors', async () => {
    const page = await episodePage();
    await page.goto(`${sites.urls.shopping}/`);
    const check = (options: Partial<EvaluatorOptions>) =>
      evaluator(html('func:shopping_get_latest_order_url()', '', { must_include: ['no such words on the page'] }), options);
    const saved = [process.env.WEBRL_SHOPPING_ADMIN_USERNAME, process.env.WEBRL_SHOPPING_ADMIN_PASSWORD];
    delete process.env.WEBRL_SHOPPING_ADMIN_USERNAME;
    delete process.env.WEBRL_SHOPPING_ADMIN_PASSWORD;
    try {
      const noAccount = buildEvaluator(
        parseTasks([
          {
            sites: ['shopping'],
            task_id: 900,
            start_url: '__SHOPPING__',
            intent: 'x',
            eval: html('func:shopping_get_latest_order_url()', '', { must_include: ['x'] }),
          },
        ])[0]!,
        { siteUrls: sites.urls, judge, harness: 'webarena' },
      );
      await assert.rejects(noAccount.evaluate(page, null), /set WEBRL_SHOPPING_ADMIN_USERNAME and WEBRL_SHOPPING_ADMIN_PASSWORD/);
      process.env.WEBRL_SHOPPING_ADMIN_USERNAME = 'admin';
      process.env.WEBRL_SHOPPING_ADMIN_PASSWORD = 'wrong-secret-pw';
      await assert.rejects(
        noAccount.evaluate(page, null),
        (error: Error) => /answered HTTP 401/.test(error.message) && !error.message.includes('wrong-secret-pw'),
      );
    } finally {
      if (saved[0] === undefined) delete process.env.WEBRL_SHOPPING_ADMIN_USERNAME;
      else process.env.WEBRL_SHOPPING_ADMIN_USERNAME = saved[0];
      if (saved[1] === undefined) delete process.env.WEBRL_SHOPPING_ADMIN_PASSWORD;
      else process.env.WEBRL_SHOPPING_ADMIN_PASSWORD = saved[1];
    }
    assert.equal(await check({}).evaluate(page, null), 0, 'with the account it runs (and the page lacks the words)');
    assert.match(page.url(), /\/sales\/order\/view\/order_id\/\d+\/$/);
  });
});

describe("the embedded shop's REST API (Magento's shapes)", () => {
  let sites: EmbeddedSites;
  const world = buildWorld();
  before(async () => {
    sites = await startEmbeddedSites();
  });
  after(async () => {
    await sites?.stop();
  });

  const token = async (origin: string, credentials: unknown = EMBEDDED_SHOP_ADMIN) =>
    fetch(`${origin}/rest/default/V1/integration/admin/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(credentials),
    });
  const get = async (url: string, bearer?: string) => fetch(url, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });

  test('an admin token for the seeded admin account, on the storefront and beside the back office; others are refused', async () => {
    const shop = sites.sites.shopping.origin;
    const admin = sites.sites.shopping_admin.origin;
    const reply = await token(shop);
    assert.equal(reply.status, 200);
    const bearer = (await reply.json()) as string;
    assert.match(bearer, /^[0-9a-f]{32}$/);
    assert.equal((await token(admin)).status, 200);
    assert.equal((await token(shop, { username: 'admin', password: 'nope' })).status, 401);
    assert.equal((await get(`${shop}/rest/V1/orders`)).status, 401);
    assert.equal((await get(`${admin}/rest/V1/orders`, bearer)).status, 200, 'one token for both sites, as one Magento install');
  });

  test('orders: search criteria sort, page and filter; items carry increment_id, status, created_at and lines', async () => {
    const shop = sites.sites.shopping.origin;
    const bearer = (await (await token(shop)).json()) as string;
    const q = (params: Record<string, string>) => `${shop}/rest/V1/orders?${new URLSearchParams(params)}`;
    const latest = (await (
      await get(
        q({ 'searchCriteria[sortOrders][0][field]': 'created_at', 'searchCriteria[sortOrders][0][direction]': 'DESC', 'searchCriteria[pageSize]': '1' }),
        bearer,
      )
    ).json()) as {
      items: { increment_id: string; created_at: string; status: string; items: { sku: string }[]; grand_total: number }[];
      total_count: number;
      search_criteria: { page_size: number; sort_orders: unknown[] };
    };
    const seeded = [...world.shopping.seed.orders].sort((a, b) => b.date.localeCompare(a.date))[0]!;
    assert.equal(latest.items.length, 1);
    assert.equal(latest.total_count, world.shopping.seed.orders.length);
    assert.equal(latest.items[0]!.increment_id, String(seeded.id).padStart(9, '0'));
    assert.match(latest.items[0]!.created_at, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    assert.equal(latest.items[0]!.status, seeded.status.toLowerCase());
    assert.deepEqual(
      latest.items[0]!.items.map((l) => l.sku),
      seeded.lines.map((l) => l.sku),
    );
    assert.deepEqual(latest.search_criteria.sort_orders, [{ field: 'created_at', direction: 'DESC' }]);
    const canceled = (await (
      await get(q({ 'searchCriteria[filterGroups][0][filters][0][field]': 'status', 'searchCriteria[filterGroups][0][filters][0][value]': 'canceled' }), bearer)
    ).json()) as { items: { status: string }[] };
    assert.ok(canceled.items.length > 0 && canceled.items.every((o) => o.status === 'canceled'));
    assert.equal((await get(q({ 'searchCriteria[nonsense]': '1' }), bearer)).status, 400);
    const admin = (await (
      await get(`${sites.sites.shopping_admin.origin}/rest/V1/orders?${new URLSearchParams({ 'searchCriteria[pageSize]': '5' })}`, bearer)
    ).json()) as { items: { customer_email: string; status_histories: unknown[] }[]; total_count: number };
    assert.equal(admin.items.length, 5);
    assert.equal(admin.total_count, world.admin.seed.orders.length);
    assert.ok(admin.items.every((o) => o.customer_email.includes('@') && Array.isArray(o.status_histories)));
  });

  test('product reviews by SKU, oldest first, with the Rating in percent; an unknown SKU is 404', async () => {
    const shop = sites.sites.shopping.origin;
    const bearer = (await (await token(shop)).json()) as string;
    const product = world.shopping.seed.catalog.products.find((p) => world.shopping.seed.catalog.reviews.filter((r) => r.productId === p.id).length > 1)!;
    const reviews = (await (await get(`${shop}/rest/V1/products/${product.sku}/reviews`, bearer)).json()) as {
      id: number;
      nickname: string;
      ratings: { rating_name: string; percent: number; value: number }[];
    }[];
    const seeded = world.shopping.seed.catalog.reviews.filter((r) => r.productId === product.id).sort((a, b) => a.id - b.id);
    assert.deepEqual(
      reviews.map((r) => r.id),
      seeded.map((r) => r.id),
    );
    assert.deepEqual(
      reviews.map((r) => r.nickname),
      seeded.map((r) => r.nickname),
    );
    assert.deepEqual(reviews[0]!.ratings[0], {
      vote_id: seeded[0]!.id,
      rating_id: 4,
      rating_name: 'Rating',
      percent: seeded[0]!.rating * 20,
      value: seeded[0]!.rating,
    });
    assert.equal((await get(`${shop}/rest/V1/products/NO-SUCH-SKU/reviews`, bearer)).status, 404);
    assert.equal((await get(`${sites.sites.shopping_admin.origin}/rest/all/V1/products/${product.sku}/reviews`, bearer)).status, 200);
  });
});
