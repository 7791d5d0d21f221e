/**
 * The sign-in form of each site that needs an account, as WebArena's auto-login drives it: where the
 * form is, how its two fields and its button are found (a label, a placeholder or a test id), and the
 * page that shows whether a session is still good. One description serves both sides: the embedded
 * sites render their login pages from it (`webrl env serve`), and the `webarena` backend fills the
 * form with it, so the same login code runs against the real sites and the embedded ones.
 */
import { Html, html } from './html';
import type { SiteName } from './siteUrls';

export type FieldLocator = { by: 'label'; text: string } | { by: 'placeholder'; text: string } | { by: 'testId'; id: string };
export type ButtonLocator = { by: 'role'; name: string } | { by: 'testId'; id: string; name: string };

export interface LoginForm {
  /** Where the form is, relative to the site's URL ('' = the site's URL itself). */
  path: string;
  username: FieldLocator;
  password: FieldLocator;
  submit: ButtonLocator;
  /** A page only a signed-in user sees (relative to the site's URL), for checking a session. */
  checkPath(username: string): string;
  /**
   * Text that page shows only when signed in, for a site that answers it with its sign-in form in
   * place (WebArena's auto-login keywords); without one, a session is good while the page does not
   * redirect.
   */
  checkKeyword?: string;
}

export const LOGIN_FORMS: Partial<Record<SiteName, LoginForm>> = {
  shopping: {
    path: '/customer/account/login/',
    username: { by: 'label', text: 'Email' },
    password: { by: 'label', text: 'Password' },
    submit: { by: 'role', name: 'Sign In' },
    checkPath: () => '/wishlist/',
  },
  shopping_admin: {
    path: '',
    username: { by: 'placeholder', text: 'user name' },
    password: { by: 'placeholder', text: 'password' },
    submit: { by: 'role', name: 'Sign in' },
    checkPath: () => '/dashboard',
    checkKeyword: 'Dashboard',
  },
  reddit: {
    path: '/login',
    username: { by: 'label', text: 'Username' },
    password: { by: 'label', text: 'Password' },
    submit: { by: 'role', name: 'Log in' },
    checkPath: (username) => `/user/${encodeURIComponent(username)}/account`,
    checkKeyword: 'Delete',
  },
  gitlab: {
    path: '/users/sign_in',
    username: { by: 'testId', id: 'username-field' },
    password: { by: 'testId', id: 'password-field' },
    submit: { by: 'testId', id: 'sign-in-button', name: 'Sign in' },
    checkPath: () => '/-/profile',
  },
};

/** The sites with a login form. */
export function sitesWithLogin(): SiteName[] {
  return Object.keys(LOGIN_FORMS) as SiteName[];
}

function field(locator: FieldLocator, name: string, type: string): Html {
  switch (locator.by) {
    case 'label':
      return html`<div class="field">
        <label for="login-${name}">${locator.text}</label> <input id="login-${name}" name="${name}" type="${type}" autocomplete="off" />
      </div>`;
    case 'placeholder':
      return html`<div class="field"><input name="${name}" type="${type}" placeholder="${locator.text}" aria-label="${name}" autocomplete="off" /></div>`;
    case 'testId':
      return html`<div class="field">
        <label for="login-${name}">${name === 'username' ? 'Username or email' : 'Password'}</label>
        <input id="login-${name}" name="${name}" type="${type}" data-testid="${locator.id}" autocomplete="off" />
      </div>`;
  }
}

/** The embedded sites' login page: the form as `form` describes it, posting back to `action`. */
export function renderLoginPage(title: string, form: LoginForm, action: string, next: string, error?: string): Html {
  const button =
    form.submit.by === 'role'
      ? html`<button type="submit">${form.submit.name}</button>`
      : html`<button type="submit" data-testid="${form.submit.id}">${form.submit.name}</button>`;
  return html`<!DOCTYPE html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>${title}</title>
      </head>
      <body>
        <main class="login-container">
          <h1>${title}</h1>
          ${error ? html`<div class="message message-error error" role="alert">${error}</div>` : ''}
          <form method="post" action="${action}" class="login-form">
            <input type="hidden" name="next" value="${next}" />
            ${field(form.username, 'username', 'text')}${field(form.password, 'password', 'password')}${button}
          </form>
        </main>
      </body>
    </html>`;
}

/** The default names of the environment variables that hold a site's account (never the values). */
export function credentialVariables(site: SiteName): { username: string; password: string } {
  const prefix = `WEBRL_${site.toUpperCase()}`;
  return { username: `${prefix}_USERNAME`, password: `${prefix}_PASSWORD` };
}
