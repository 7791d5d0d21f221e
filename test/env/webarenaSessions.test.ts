/**
 * Session checks as WebArena's auto-login makes them, against a site that behaves like a real Magento
 * admin: an expired session gets the sign-in form in place, at the page's own URL, with no redirect.
 * Only the page's keyword ("Dashboard") tells the two apart.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { LOGIN_FORMS, renderLoginPage } from '../../env/loginForms';
import { SiteSessions } from '../../env/webarena/sessions';
import type { WebArenaSite } from '../../env/webarena/sites';
import { BrowserPool } from '../../browser/pool';

const ACCOUNT = { username: 'admin', password: `pw-${randomBytes(6).toString('hex')}` };

describe('session checks on a site that shows its sign-in form in place', () => {
  const form = LOGIN_FORMS.shopping_admin!;
  const sessions = new Set<string>();
  let admin: Server;
  let url: string;
  let pool: BrowserPool;

  before(async () => {
    pool = await BrowserPool.start({ size: 1 });
    admin = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.method === 'POST') {
          const fields = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
          if (fields.get('username') !== ACCOUNT.username || fields.get('password') !== ACCOUNT.password) return res.writeHead(401).end('wrong account');
          const session = randomBytes(8).toString('hex');
          sessions.add(session);
          return res.writeHead(303, { location: '/dashboard', 'set-cookie': `admin_session=${session}; Path=/` }).end();
        }
        const cookie = /admin_session=(\w+)/.exec(req.headers.cookie ?? '')?.[1];
        const signedIn = cookie !== undefined && sessions.has(cookie);
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(
          signedIn ? '<!DOCTYPE html><title>Dashboard</title><h1>Dashboard</h1>' : String(renderLoginPage('Magento Admin', form, req.url ?? '/', '/dashboard')),
        );
      });
    });
    await new Promise<void>((resolve) => admin.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(admin.address() as AddressInfo).port}`;
  });
  after(async () => {
    admin?.closeAllConnections();
    admin?.close();
    await pool?.close();
  });

  test('an ended session is noticed by the missing keyword and signed in again; a live one is kept', async () => {
    const site: WebArenaSite = { name: 'shopping_admin', url, form, credentials: { username: 'ADMIN_USER', password: 'ADMIN_PASS' }, maxConcurrentEpisodes: 1 };
    const checked = new SiteSessions(() => pool.openContext(), { ADMIN_USER: ACCOUNT.username, ADMIN_PASS: ACCOUNT.password }, 0);
    const first = await checked.validState(site);
    assert.equal(checked.signIns.get('shopping_admin'), 1);
    assert.equal(await checked.validState(site), first, 'a live session is kept');
    assert.equal(checked.signIns.get('shopping_admin'), 1);

    sessions.clear();
    const second = await checked.validState(site);
    assert.notEqual(second, first);
    assert.equal(checked.signIns.get('shopping_admin'), 2, 'the form shown in place of the dashboard meant a new sign-in');
  });
});
