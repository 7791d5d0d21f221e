/**
 * Signing in to the sites as WebArena's auto-login does (the same form, found the same way) and
 * keeping each site's browser storage state in this worker's memory only: never on disk, in the
 * store, in histories or logs. A state is dropped when a site is reset or a page shows its sign-in
 * form again, and the next episode signs in anew.
 */
import { neverStore } from '../../config/secrets';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import type { ButtonLocator, FieldLocator, LoginForm } from '../loginForms';
import type { WebArenaSite } from './sites';

export type StorageState = Awaited<ReturnType<BrowserContext['storageState']>>;

export class LoginFailed extends Error {
  override name = 'LoginFailed';
}

function field(page: Page, locator: FieldLocator): Locator {
  switch (locator.by) {
    case 'label':
      return page.getByLabel(locator.text, { exact: true });
    case 'placeholder':
      return page.getByPlaceholder(locator.text);
    case 'testId':
      return page.getByTestId(locator.id);
  }
}

function button(page: Page, locator: ButtonLocator): Locator {
  return locator.by === 'role' ? page.getByRole('button', { name: locator.name }) : page.getByTestId(locator.id);
}

/** Whether `page` shows the site's sign-in form (a login redirect, or an expired session). */
export async function showsLoginForm(page: Page, site: Pick<WebArenaSite, 'url' | 'form'>): Promise<boolean> {
  if (!site.form) return false;
  let onSite = false;
  try {
    onSite = new URL(page.url()).origin === new URL(site.url).origin;
  } catch {
    return false;
  }
  if (!onSite) return false;
  const present = async (locator: Locator) => (await locator.count().catch(() => 0)) > 0;
  return (await present(field(page, site.form.password))) && (await present(field(page, site.form.username)));
}

/** Fills the site's form in a fresh context and returns its storage state; throws `LoginFailed` naming the site. */
export async function signIn(context: BrowserContext, site: WebArenaSite, account: { username: string; password: string }): Promise<StorageState> {
  const form = site.form as LoginForm;
  const page = await context.newPage();
  const where = `${site.url}${form.path}`;
  try {
    await page.goto(where, { waitUntil: 'load', timeout: 60_000 });
    await field(page, form.username).fill(account.username, { timeout: 30_000 });
    await field(page, form.password).fill(account.password, { timeout: 30_000 });
    await Promise.all([page.waitForLoadState('load'), button(page, form.submit).click({ timeout: 30_000 })]);
    await page.waitForLoadState('load');
    await page.goto(`${site.url}${form.checkPath(account.username)}`, { waitUntil: 'load', timeout: 60_000 });
    if (await showsLoginForm(page, site))
      throw new LoginFailed(`login to site ${site.name} at ${where} as ${account.username} failed: the sign-in form is still shown`);
    return await context.storageState();
  } catch (error) {
    if (error instanceof LoginFailed) throw error;
    throw new LoginFailed(`login to site ${site.name} at ${where} failed: ${(error as Error).message.split('\n')[0]}`);
  } finally {
    await page.close().catch(() => undefined);
  }
}

/** The account of a site, from the environment variables its config names; throws naming the missing ones. */
export function accountOf(site: WebArenaSite, env: NodeJS.ProcessEnv): { username: string; password: string } {
  const username = env[site.credentials.username];
  const password = env[site.credentials.password];
  const missing = [!username && site.credentials.username, !password && site.credentials.password].filter(Boolean);
  if (missing.length) throw new LoginFailed(`site ${site.name} needs an account: set ${missing.join(' and ')}`);
  neverStore(password);
  return { username: username!, password: password! };
}

/**
 * Whether a stored state still opens the site's signed-in page, checked over plain HTTP (cheap) as
 * WebArena's auto-login checks it: the page shows the site's keyword where it has one (a Magento admin
 * answers with its sign-in form in place), else it answers at its own URL rather than redirecting.
 */
async function sessionAlive(site: WebArenaSite, state: StorageState, username: string): Promise<boolean> {
  const form = site.form as LoginForm;
  const host = new URL(site.url).hostname;
  const cookie = state.cookies
    .filter((c) => c.domain.replace(/^\./, '') === host)
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');
  const checkUrl = `${site.url}${form.checkPath(username)}`;
  const response = await fetch(checkUrl, { headers: { cookie }, signal: AbortSignal.timeout(30_000) });
  if (form.checkKeyword) return (await response.text()).includes(form.checkKeyword);
  await response.body?.cancel();
  const path = (url: string) => new URL(url).pathname.replace(/\/+$/, '');
  return response.ok && path(response.url) === path(checkUrl);
}

/** Per-site storage states of one worker, signed in on first use and again after `invalidate`. */
export class SiteSessions {
  private readonly states = new Map<string, Promise<StorageState>>();
  private readonly checked = new Map<string, number>();
  /** Sign-ins done, per site (for tests and benches). */
  readonly signIns = new Map<string, number>();

  constructor(
    private readonly openContext: () => Promise<BrowserContext>,
    private readonly env: NodeJS.ProcessEnv = process.env,
    /** How long a state is trusted before an episode checks it again (0: every episode). */
    private readonly checkEveryMs = 60_000,
  ) {}

  /** The site's storage state, checked when it was not for `checkEveryMs` and signed in anew if it expired. */
  async validState(site: WebArenaSite): Promise<StorageState | undefined> {
    const state = await this.state(site);
    if (!state || Date.now() - (this.checked.get(site.name) ?? 0) < this.checkEveryMs) return state;
    if (await sessionAlive(site, state, accountOf(site, this.env).username)) {
      this.checked.set(site.name, Date.now());
      return state;
    }
    if ((await this.states.get(site.name)) === state) this.invalidate(site.name);
    return this.state(site);
  }

  /** The site's storage state; undefined for a site without accounts. */
  async state(site: WebArenaSite): Promise<StorageState | undefined> {
    if (!site.form) return undefined;
    let state = this.states.get(site.name);
    if (!state) {
      state = this.signIn(site);
      this.states.set(site.name, state);
      // A failed sign-in is not kept: the next episode tries again.
      state.catch(() => {
        if (this.states.get(site.name) === state) this.states.delete(site.name);
      });
    }
    return state;
  }

  invalidate(site: string): void {
    this.states.delete(site);
  }

  private async signIn(site: WebArenaSite): Promise<StorageState> {
    const account = accountOf(site, this.env);
    const context = await this.openContext();
    try {
      const state = await signIn(context, site, account);
      this.signIns.set(site.name, (this.signIns.get(site.name) ?? 0) + 1);
      this.checked.set(site.name, Date.now());
      return state;
    } finally {
      await context.close().catch(() => undefined);
    }
  }
}
