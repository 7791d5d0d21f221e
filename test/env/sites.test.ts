import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEmbeddedSites, type EmbeddedSites } from '../../env/embeddedSites';
import { CowTable } from '../../env/state/cowTable';
import { EPISODE_COOKIE } from '../../env/state/episodes';

describe('copy-on-write tables', () => {
  test('reads fall through to the seed; writes, updates and deletes stay in the overlay', () => {
    const seed = new Map([
      [1, { id: 1, v: 'a' }],
      [2, { id: 2, v: 'b' }],
    ]);
    const table = new CowTable(seed, 3);
    table.update(1, (row) => ({ ...row, v: 'A' }));
    table.delete(2);
    const id = table.allocateId();
    table.set(id, { id, v: 'c' });
    assert.deepEqual(table.all(), [
      { id: 1, v: 'A' },
      { id: 3, v: 'c' },
    ]);
    assert.deepEqual(
      [...seed.values()],
      [
        { id: 1, v: 'a' },
        { id: 2, v: 'b' },
      ],
    );
    assert.deepEqual(new CowTable(seed).all(), [
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
    ]);
  });
});

describe('embedded site servers', () => {
  let sites: EmbeddedSites;
  before(async () => {
    sites = await startEmbeddedSites();
  });
  after(async () => {
    await sites.stop();
  });

  const episode = async (method: 'PUT' | 'DELETE', id: string) => {
    for (const site of Object.values(sites.sites)) assert.equal((await fetch(`${site.origin}/__webrl/episodes/${id}`, { method })).status, 204);
  };
  const get = (url: string, id?: string) => fetch(url, { headers: id ? { cookie: `${EPISODE_COOKIE}=${id}` } : {} });
  const post = (url: string, form: Record<string, string>, id: string) =>
    fetch(url, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams(form),
      headers: { cookie: `${EPISODE_COOKIE}=${id}`, 'content-type': 'application/x-www-form-urlencoded' },
    });

  test('run on four distinct ports with realistic pages', async () => {
    assert.equal(new Set(Object.values(sites.sites).map((s) => s.port)).size, 4);
    assert.match(sites.urls.shopping_admin, /\/admin$/);
    const pages = [
      [`${sites.urls.shopping}/home-kitchen/furniture.html`, 'Sort By'],
      [`${sites.urls.shopping_admin}/sales/order/`, 'records found'],
      [`${sites.urls.reddit}/f/books`, 'Submit a new post'],
      [`${sites.urls.gitlab}/a11yproject/a11yproject.com/-/issues`, 'New issue'],
    ];
    for (const [url, text] of pages) {
      const res = await get(url as string);
      const body = await res.text();
      assert.equal(res.status, 200, url);
      assert.ok(body.includes(text as string) && body.length > 4000, url);
    }
  });

  test('episodes are isolated from each other and from the public state, and disposal is final', async () => {
    await episode('PUT', 'ep-a');
    await episode('PUT', 'ep-b');
    const order = `${sites.urls.shopping_admin}/sales/order/view/order_id/`;
    const cancellable = (await (await get(`${sites.urls.shopping_admin}/sales/order/?status=pending`, 'ep-a')).text()).match(/data-order-id="(\d+)"/)?.[1];
    assert.ok(cancellable);
    const res = await post(`${sites.urls.shopping_admin}/sales/order/cancel/order_id/${cancellable}/`, {}, 'ep-a');
    assert.equal(res.status, 303);
    const status = async (id?: string) => (await (await get(`${order}${cancellable}/`, id)).text()).match(/id="order_status">([^<]*)/)?.[1];
    assert.equal(await status('ep-a'), 'Canceled');
    assert.equal(await status('ep-b'), 'Pending');
    assert.equal(await status(), 'Pending');
    await episode('DELETE', 'ep-a');
    assert.equal((await get(`${order}${cancellable}/`, 'ep-a')).status, 410);
    await episode('PUT', 'ep-a');
    assert.equal(await status('ep-a'), 'Pending');
    await episode('DELETE', 'ep-a');
    await episode('DELETE', 'ep-b');
  });

  test('a reset (create + drop on all four sites) costs milliseconds', async () => {
    const started = performance.now();
    const rounds = 50;
    for (let i = 0; i < rounds; i++) {
      await episode('PUT', `reset-${i}`);
      await episode('DELETE', `reset-${i}`);
    }
    const perReset = (performance.now() - started) / rounds;
    assert.ok(perReset < 100, `reset took ${perReset.toFixed(1)} ms`);
  });
});
