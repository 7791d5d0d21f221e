/**
 * The forum (modelled on WebArena's Postmill "reddit"): front page, forum list, forum pages with
 * hot/new/top sorting and pagination, submission pages with votes and comment threads, submitting,
 * commenting, subscribing, creating and editing forums, user pages and biography, search. Class
 * names follow Postmill's, which WebArena's evaluators select on.
 */
import { html, slugify, type Html } from '../../html';
import { intParam, notFound, pageNumber, redirect, Router, type RequestContext } from '../../http/router';
import type { SiteApp } from '../../http/siteServer';
import { longDate, paginate, withQuery } from '../common';
import type { Submission } from './data';
import { RedditState, type RedditBase, type SortMode } from './state';

type Ctx = RequestContext<RedditState>;

const STYLE = `body{font-family:Verdana,sans-serif;margin:0;color:#222;font-size:14px}a{color:#0645ad}
.site-nav{display:flex;gap:18px;align-items:center;background:#3f51b5;padding:8px 16px}.site-nav a{color:#fff;text-decoration:none;font-weight:bold}
.site-nav form{margin-left:auto}.layout{display:flex;gap:20px;padding:12px 16px}.main{flex:1;min-width:0}#sidebar{width:280px;flex:none}
#sidebar section{border:1px solid #ddd;padding:8px 10px;margin-bottom:10px}.submission{display:flex;gap:10px;border-bottom:1px solid #eee;padding:6px 0}
.vote{display:flex;flex-direction:column;align-items:center;width:40px}.vote button{font-size:11px;padding:0 4px}.submission__info{font-size:12px;color:#666}
.tabs{display:flex;gap:14px;margin:6px 0}.submission__link,.user-comments a{display:inline-block}.comment{margin:6px 0;border-left:2px solid #ddd;padding-left:8px}.flash{background:#dff0d8;padding:6px 16px}
.forum-grid{display:grid;grid-template-columns:repeat(4,1fr);gap:4px 16px;list-style:none;padding:0}.field{margin:6px 0}label{display:block;font-weight:bold}`;

function layout(ctx: Ctx, title: string, main: Html, sidebar: Html = html``): Html {
  const s = ctx.state;
  const flash = s.takeFlash();
  return html`<!DOCTYPE html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>${title} — Postmill</title>
        <style>
          ${STYLE}
        </style>
      </head>
      <body>
        <nav class="site-nav">
          <a href="/" class="site-nav__link--home">Postmill</a><a href="/forums">Forums</a><a href="/wiki">Wiki</a>
          <form action="/search" method="get" class="search">
            <input type="search" name="q" id="search-q" placeholder="Search" aria-label="Search query" /> <button type="submit">Search</button>
          </form>
          <a href="/submit">Submit</a><a href="/user/${s.me}" class="site-nav__user">${s.me}</a>
        </nav>
        ${flash ? html`<div class="flash flash--success" role="alert">${flash}</div>` : ''}
        <div class="layout">
          <main class="main" id="main">${main}</main>
          <aside id="sidebar">${sidebar}</aside>
        </div>
        <footer class="site-footer">
          <p>Running Postmill. <a href="/about">About</a> · <a href="/wiki/rules">Rules</a> · <a href="/forums">All forums</a></p>
        </footer>
      </body>
    </html>`;
}

function voteForm(ctx: Ctx, sub: Submission): Html {
  const mine = ctx.state.votes.get(sub.id) ?? 0;
  const cls = mine === 1 ? 'vote vote--user-upvoted' : mine === -1 ? 'vote vote--user-downvoted' : 'vote';
  const back = ctx.url.pathname + ctx.url.search;
  return html`<form class="${cls}" method="post" action="/sv/${sub.id}">
    <input type="hidden" name="return" value="${back}" />
    <button type="submit" name="choice" value="${mine === 1 ? 0 : 1}" class="vote__up" title="Upvote" data-submission="${sub.id}">▲</button>
    <span class="vote__net-score">${ctx.state.score(sub)}</span>
    <button type="submit" name="choice" value="${mine === -1 ? 0 : -1}" class="vote__down" title="Downvote" data-submission="${sub.id}">▼</button>
  </form>`;
}

function submissionUrl(sub: Submission): string {
  return `/f/${sub.forum}/${sub.id}/${sub.slug}`;
}

function submissionRow(ctx: Ctx, sub: Submission): Html {
  const count = ctx.state.commentCount(sub.id);
  return html`<article class="submission submission--row" data-id="${sub.id}">
    <div class="submission__vote">${voteForm(ctx, sub)}</div>
    <div class="submission__row-inner">
      <h2 class="submission__title"><a class="submission__link" href="${sub.url ?? submissionUrl(sub)}">${sub.title}</a></h2>
      <p class="submission__info">
        Submitted by <a href="/user/${sub.author}" class="submission__author">${sub.author}</a> on
        <time datetime="${sub.created}">${longDate(sub.created)}</time> in <a href="/f/${sub.forum}">${sub.forum}</a>
      </p>
      <nav class="submission__nav"><a href="${submissionUrl(sub)}" class="submission__comments-link">${count} ${count === 1 ? 'comment' : 'comments'}</a></nav>
    </div>
  </article>`;
}

function listing(ctx: Ctx, path: string, subs: Submission[]): Html {
  const { items, pages, page } = paginate(subs, pageNumber(ctx.query), 25);
  return html`${items.length ? items.map((s) => submissionRow(ctx, s)) : html`<p>There are no submissions here.</p>`}
    <nav class="pagination">
      ${page > 1 ? html`<a href="${withQuery(path, ctx.query, { p: String(page - 1) })}" rel="prev">Previous</a> ` : ''}${page < pages ? html`<a href="${withQuery(path, ctx.query, { p: String(page + 1) })}" rel="next">More</a>` : ''}
    </nav>`;
}

function sortTabs(base: string, mode: SortMode): Html {
  const tabs: [SortMode, string, string][] = [
    ['hot', 'Hot', base || '/'],
    ['new', 'New', `${base}/new`],
    ['top', 'Top', `${base}/top?t=all`],
  ];
  return html`<nav class="tabs">
    ${tabs.map(([m, label, href]) => (m === mode ? html`<strong class="tab tab--active">${label}</strong>` : html`<a class="tab" href="${href}">${label}</a>`))}
  </nav>`;
}

function frontSidebar(ctx: Ctx): Html {
  const subs = ctx.state.subscriptions.all().sort((a, b) => a.localeCompare(b));
  return html`<section class="sidebar__section">
      <h1 class="sidebar__title">Subscribed forums</h1>
      <ul>
        ${subs.map((f) => html`<li><a href="/f/${f}">${f}</a></li>`)}
      </ul>
    </section>
    <section class="sidebar__section">
      <h1 class="sidebar__title">Postmill</h1>
      <p>A place for communities. <a href="/create_forum">Create a forum</a></p>
    </section>`;
}

function frontPage(ctx: Ctx, mode: SortMode): Html {
  const s = ctx.state;
  const subscribed = new Set(s.subscriptions.all().map((f) => f.toLowerCase()));
  const subs = s.sorted(
    s.submissions.filter((x) => subscribed.has(x.forum.toLowerCase())),
    mode,
  );
  return layout(
    ctx,
    'Front page',
    html`<h1>Your front page</h1>
      ${sortTabs('', mode)}${listing(ctx, ctx.url.pathname, subs)}`,
    frontSidebar(ctx),
  );
}

function forumsPage(ctx: Ctx): Html {
  const forums = ctx.state.forums.all().sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
  return layout(
    ctx,
    'Forums',
    html`<h1>List of forums</h1>
      <p><a href="/create_forum" class="button-create-forum">Create a forum</a></p>
      <ul class="forum-grid">
        ${forums.map((f) => html`<li><a href="/f/${f.name}" class="forum-list__link">${f.name}</a> <small>${f.subscribers + (ctx.state.isSubscribed(f.name) ? 1 : 0)} subscribers</small></li>`)}
      </ul>`,
  );
}

function forumSidebar(ctx: Ctx, forumName: string): Html {
  const f = ctx.state.forum(forumName) ?? notFound(`forum ${forumName}`);
  const subscribed = ctx.state.isSubscribed(f.name);
  return html`<section class="sidebar__section forum-sidebar">
    <h1 class="sidebar__title"><a href="/f/${f.name}">${f.title}</a></h1>
    <form method="post" action="/f/${f.name}/subscribe">
      <button type="submit" class="subscribe-button" title="${subscribed ? 'Unsubscribe' : 'Subscribe'}">${subscribed ? 'Unsubscribe' : 'Subscribe'}</button>
    </form>
    <p class="forum-description">${f.description}</p>
    <div class="forum-sidebar-content">${f.sidebar}</div>
    <p><a href="/submit/${f.name}" class="submit-link">Submit a new post</a></p>
    ${f.createdBy === ctx.state.me ? html`<p><a href="/f/${f.name}/edit">Edit forum</a></p>` : ''}
    <p>Moderator: <a href="/user/${f.createdBy}">${f.createdBy}</a></p>
  </section>`;
}

function forumPage(ctx: Ctx, forumName: string, mode: SortMode): Html {
  const f = ctx.state.forum(forumName) ?? notFound(`forum ${forumName}`);
  return layout(
    ctx,
    f.title,
    html`<h1 class="forum-title">${f.title} <small>/f/${f.name}</small></h1>
      ${sortTabs(`/f/${f.name}`, mode)}${listing(ctx, ctx.url.pathname, ctx.state.inForum(f.name, mode))}`,
    forumSidebar(ctx, f.name),
  );
}

function submissionPage(ctx: Ctx, sub: Submission): Html {
  const s = ctx.state;
  const thread = s.thread(sub.id);
  return layout(
    ctx,
    sub.title,
    html`<article class="submission submission--full" data-id="${sub.id}">
        <div class="submission__vote">${voteForm(ctx, sub)}</div>
        <div class="submission__inner">
          <h1 class="submission__title"><a class="submission__link" href="${sub.url ?? submissionUrl(sub)}">${sub.title}</a></h1>
          ${sub.url ? html`<p class="submission__url"><a href="${sub.url}">${sub.url}</a></p>` : ''}${sub.body ? html`<div class="submission__body">${sub.body}</div>` : ''}
          <p class="submission__info">
            Submitted by <a href="/user/${sub.author}" class="submission__author">${sub.author}</a> on
            <time datetime="${sub.created}">${longDate(sub.created)}</time> in <a href="/f/${sub.forum}">${sub.forum}</a>
          </p>
          <nav class="submission__nav">
            <span>${thread.length} comments</span
            >${sub.author === s.me ? html` <a href="/submission/${sub.id}/edit" class="submission__edit-link">Edit</a>` : ''}
          </nav>
        </div>
      </article>
      <form method="post" action="/f/${sub.forum}/${sub.id}/comment" class="comment-form">
        <label for="reply_submission_comment">Post a comment</label>
        <textarea name="comment[comment]" id="reply_submission_comment" rows="4" cols="60"></textarea>
        <button type="submit" id="reply_submission_submit">Post</button>
      </form>
      <section class="comments">
        ${thread.map(
          ({ comment: c, level }) =>
            html`<article class="comment" id="comment_${c.id}" data-level="${level}" data-author="${c.author}" style="margin-left:${level * 20}px">
              <header class="comment__header">
                <a href="/user/${c.author}" class="fg-inherit">${c.author}</a> <time datetime="${c.created}">${longDate(c.created)}</time>
                <span class="vote__net-score">${c.score} points</span>
              </header>
              <div class="comment__body">${c.body}</div>
            </article>`,
        )}
      </section>`,
    forumSidebar(ctx, sub.forum),
  );
}

function submitPage(ctx: Ctx, forum: string | undefined): Html {
  const forums = ctx.state.forums.all().sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
  return layout(
    ctx,
    'Create submission',
    html`<h1>Create submission</h1>
      <form method="post" action="/submit" class="submission-form">
        <div class="field"><label for="submission_url">URL</label><input type="url" name="url" id="submission_url" size="60" /></div>
        <div class="field"><label for="submission_title">Title</label><input type="text" name="title" id="submission_title" size="60" required /></div>
        <div class="field"><label for="submission_body">Body</label><textarea name="body" id="submission_body" rows="6" cols="60"></textarea></div>
        <div class="field">
          <label for="submission_forum">Forum</label
          ><select name="forum" id="submission_forum">
            <option value="">Choose one</option>
            ${forums.map((f) => html`<option value="${f.name}" ${forum && f.name.toLowerCase() === forum.toLowerCase() ? 'selected' : ''}>${f.name}</option>`)}
          </select>
        </div>
        <button type="submit" id="submission_submit">Create submission</button>
      </form>`,
  );
}

function createSubmission(ctx: Ctx) {
  const s = ctx.state;
  const forum = s.forum(ctx.form.get('forum') ?? '');
  const title = (ctx.form.get('title') ?? '').trim();
  if (!forum || !title) {
    s.flash = 'A submission needs a title and a forum.';
    return redirect('/submit');
  }
  const id = s.submissions.allocateId();
  const url = (ctx.form.get('url') ?? '').trim();
  const sub: Submission = {
    id,
    forum: forum.name,
    author: s.me,
    title,
    slug: slugify(title).slice(0, 60).replace(/-+$/, '') || 'post',
    body: (ctx.form.get('body') ?? '').trim(),
    url: url || null,
    created: s.clock.now(),
    score: 0,
  };
  s.submissions.set(id, sub);
  s.votes.set(id, 1);
  return redirect(submissionUrl(sub));
}

function userPage(ctx: Ctx): Html {
  const s = ctx.state;
  const name = ctx.params.name ?? '';
  if (!s.base.seed.users.includes(name)) notFound(`user ${name}`);
  const subs = s.byUser(name);
  const comments = s.comments
    .filter((c) => c.author === name)
    .sort((a, b) => b.created.localeCompare(a.created))
    .slice(0, 10);
  const bio = s.bios.get(name);
  return layout(
    ctx,
    name,
    html`<h1 class="user-name">${name}</h1>
      ${
        bio
          ? html`<div class="user-bio">
              <h2>Biography</h2>
              <div class="user-bio__biography">${bio}</div>
            </div>`
          : ''
      }
      ${name === s.me ? html`<p><a href="/user/${name}/edit_biography" class="edit-biography">Edit biography</a></p>` : ''}
      <h2>Submissions (${subs.length})</h2>
      ${subs.map((x) => submissionRow(ctx, x))}
      <h2>Recent comments</h2>
      <ul class="user-comments">
        ${comments.map((c) => {
          const sub = s.submissions.get(c.submissionId);
          return html`<li>${c.body} — on <a href="${sub ? submissionUrl(sub) : '#'}">${sub?.title ?? ''}</a></li>`;
        })}
      </ul>`,
  );
}

function forumForm(ctx: Ctx, action: string, values: { name: string; title: string; description: string; sidebar: string }, submit: string): Html {
  return html`<form method="post" action="${action}" class="forum-form">
    <div class="field"><label for="forum_name">Name</label><input type="text" name="forum[name]" id="forum_name" value="${values.name}" required /></div>
    <div class="field"><label for="forum_title">Title</label><input type="text" name="forum[title]" id="forum_title" value="${values.title}" required /></div>
    <div class="field">
      <label for="forum_description">Description</label
      ><textarea name="forum[description]" id="forum_description" rows="3" cols="60">${values.description}</textarea>
    </div>
    <div class="field">
      <label for="forum_sidebar">Sidebar</label><textarea name="forum[sidebar]" id="forum_sidebar" rows="4" cols="60">${values.sidebar}</textarea>
    </div>
    <button type="submit" id="forum_submit">${submit}</button>
  </form>`;
}

function saveForum(ctx: Ctx, existing: string | undefined) {
  const s = ctx.state;
  const name = (ctx.form.get('forum[name]') ?? existing ?? '').trim();
  if (!/^[A-Za-z0-9_]{3,25}$/.test(name)) {
    s.flash = 'The forum name must be 3 to 25 letters, digits or underscores.';
    return redirect(existing ? `/f/${existing}/edit` : '/create_forum');
  }
  if (!existing && s.forum(name)) {
    s.flash = 'That forum name is already taken.';
    return redirect('/create_forum');
  }
  if (existing && existing.toLowerCase() !== name.toLowerCase()) s.forums.delete(existing.toLowerCase());
  s.forums.set(name.toLowerCase(), {
    name,
    title: (ctx.form.get('forum[title]') ?? '').trim() || name,
    description: (ctx.form.get('forum[description]') ?? '').trim(),
    sidebar: (ctx.form.get('forum[sidebar]') ?? '').trim(),
    subscribers: 0,
    createdBy: s.me,
  });
  if (!existing) s.subscriptions.set(name.toLowerCase(), name);
  s.flash = existing ? 'The forum was updated.' : 'Your forum was created.';
  return redirect(`/f/${name}`);
}

/** `/f/:forum/:second?`: a sort mode (`new`, `top`), a submission id, or the forum's own pages. */
function forumRoute(ctx: Ctx): Html {
  const forum = ctx.params.forum ?? '';
  const second = ctx.params.second;
  if (second === undefined || second === 'hot') return forumPage(ctx, forum, 'hot');
  if (second === 'new' || second === 'top') return forumPage(ctx, forum, second);
  if (second === 'edit') {
    const f = ctx.state.forum(forum) ?? notFound(`forum ${forum}`);
    if (f.createdBy !== ctx.state.me) notFound('forum settings you may edit');
    return layout(
      ctx,
      `Edit /f/${f.name}`,
      html`<h1>Edit forum</h1>
        ${forumForm(ctx, `/f/${f.name}/edit`, f, 'Save')}`,
    );
  }
  const sub = ctx.state.submissions.get(Number(second));
  if (!sub || sub.forum.toLowerCase() !== forum.toLowerCase()) notFound('submission');
  return submissionPage(ctx, sub);
}

/** The front page, forum list, wiki, about and search pages. */
function pageRoutes(router: Router<RedditState>): void {
  router
    .get('/', (ctx) => frontPage(ctx, 'hot'))
    .get('/new', (ctx) => frontPage(ctx, 'new'))
    .get('/top', (ctx) => frontPage(ctx, 'top'))
    .get('/forums', forumsPage)
    .get('/wiki', (ctx) =>
      layout(
        ctx,
        'Wiki',
        html`<h1>Wiki</h1>
          <p>Welcome to the wiki. See the <a href="/wiki/rules">rules</a>.</p>`,
      ),
    )
    .get('/wiki/rules', (ctx) =>
      layout(
        ctx,
        'Rules',
        html`<h1>Rules</h1>
          <ol>
            <li>Be civil.</li>
            <li>No spam.</li>
            <li>Stay on topic.</li>
          </ol>`,
      ),
    )
    .get('/about', (ctx) =>
      layout(
        ctx,
        'About',
        html`<h1>About</h1>
          <p>This site runs Postmill, a free and open-source link aggregator.</p>`,
      ),
    )
    .get('/search', (ctx) => {
      const q = ctx.query.get('q') ?? '';
      return layout(
        ctx,
        `Search: ${q}`,
        html`<h1>Search results for "${q}"</h1>
          ${listing(ctx, '/search', ctx.state.search(q))}`,
      );
    });
}

/** Submitting, forums (create, edit, subscribe), comments, votes and editing a submission. */
function submissionRoutes(router: Router<RedditState>): void {
  router
    .get('/submit', (ctx) => submitPage(ctx, undefined))
    .get('/submit/:forum', (ctx) => submitPage(ctx, ctx.params.forum))
    .post('/submit', createSubmission)
    .get('/create_forum', (ctx) =>
      layout(
        ctx,
        'Create forum',
        html`<h1>Create new forum</h1>
          ${forumForm(ctx, '/create_forum', { name: '', title: '', description: '', sidebar: '' }, 'Create forum')}`,
      ),
    )
    .post('/create_forum', (ctx) => saveForum(ctx, undefined))
    .post('/f/:forum/edit', (ctx) => saveForum(ctx, ctx.state.forum(ctx.params.forum ?? '')?.name ?? notFound('forum')))
    .post('/f/:forum/subscribe', (ctx) => {
      const s = ctx.state;
      const f = s.forum(ctx.params.forum ?? '') ?? notFound('forum');
      if (s.isSubscribed(f.name)) s.subscriptions.delete(f.name.toLowerCase());
      else s.subscriptions.set(f.name.toLowerCase(), f.name);
      return redirect(`/f/${f.name}`);
    })
    .post('/f/:forum/:id/comment', (ctx) => {
      const s = ctx.state;
      const sub = s.submissions.get(intParam(ctx.params, 'id')) ?? notFound('submission');
      const body = (ctx.form.get('comment[comment]') ?? '').trim();
      if (!body) return redirect(submissionUrl(sub));
      const id = s.comments.allocateId();
      s.comments.set(id, { id, submissionId: sub.id, parentId: null, author: s.me, body, created: s.clock.now(), score: 1 });
      return redirect(`${submissionUrl(sub)}#comment_${id}`);
    })
    .post('/sv/:id', (ctx) => {
      const s = ctx.state;
      const sub = s.submissions.get(intParam(ctx.params, 'id')) ?? notFound('submission');
      const choice = Number(ctx.form.get('choice'));
      if (choice === 1 || choice === -1) s.votes.set(sub.id, choice);
      else s.votes.delete(sub.id);
      const back = ctx.form.get('return') ?? '';
      return redirect(back.startsWith('/') ? back : submissionUrl(sub));
    })
    .get('/submission/:id/edit', (ctx) => {
      const sub = ctx.state.submissions.get(intParam(ctx.params, 'id')) ?? notFound('submission');
      if (sub.author !== ctx.state.me) notFound('submission you may edit');
      return layout(
        ctx,
        'Edit submission',
        html`<h1>Edit submission</h1>
          <form method="post" action="/submission/${sub.id}/edit">
            <div class="field">
              <label for="submission_title">Title</label><input type="text" name="title" id="submission_title" value="${sub.title}" size="60" />
            </div>
            <div class="field">
              <label for="submission_body">Body</label><textarea name="body" id="submission_body" rows="6" cols="60">${sub.body}</textarea>
            </div>
            <button type="submit" id="submission_submit">Save</button>
          </form>`,
      );
    })
    .post('/submission/:id/edit', (ctx) => {
      const s = ctx.state;
      const sub = s.submissions.get(intParam(ctx.params, 'id')) ?? notFound('submission');
      if (sub.author !== s.me) notFound('submission you may edit');
      const next = s.submissions.update(sub.id, (x) => ({
        ...x,
        title: (ctx.form.get('title') ?? '').trim() || x.title,
        body: (ctx.form.get('body') ?? '').trim(),
      }));
      s.flash = 'The submission was edited.';
      return redirect(submissionUrl(next ?? sub));
    });
}

/** A user's page, biography and account. */
function userRoutes(router: Router<RedditState>): void {
  router
    .get('/user/:name', userPage)
    .get('/user/:name/edit_biography', (ctx) => {
      const s = ctx.state;
      if (ctx.params.name !== s.me) notFound('biography you may edit');
      return layout(
        ctx,
        'Edit biography',
        html`<h1>Edit biography</h1>
          <form method="post" action="/user/${s.me}/edit_biography">
            <label for="user_biography_biography">Biography</label>
            <textarea name="user_biography[biography]" id="user_biography_biography" rows="4" cols="60">${s.bios.get(s.me) ?? ''}</textarea>
            <button type="submit" id="user_biography_submit">Save</button>
          </form>`,
      );
    })
    // The account settings page WebArena's auto-login opens to check a session ("Delete" on it means signed in).
    .get('/user/:name/account', (ctx) => {
      const s = ctx.state;
      if (ctx.params.name !== s.me) notFound('account you may change');
      return layout(
        ctx,
        'Account',
        html`<h1>Account</h1>
          <p>Signed in as <a href="/user/${s.me}">${s.me}</a>.</p>
          <p><a href="/user/${s.me}/edit_biography" class="edit-biography">Edit biography</a></p>
          <h2>Delete account</h2>
          <p>Accounts on this forum are deleted by its administrators.</p>`,
      );
    })
    .post('/user/:name/edit_biography', (ctx) => {
      const s = ctx.state;
      if (ctx.params.name !== s.me) notFound('biography you may edit');
      s.bios.set(s.me, (ctx.form.get('user_biography[biography]') ?? '').trim());
      s.flash = 'Your biography was saved.';
      return redirect(`/user/${s.me}`);
    });
}

/** A forum's listing and its submissions' pages. */
function forumRoutes(router: Router<RedditState>): void {
  router.get('/f/:forum/:second?', forumRoute).get('/f/:forum/:id/:slug', (ctx) => {
    const sub = ctx.state.submissions.get(intParam(ctx.params, 'id')) ?? notFound('submission');
    return submissionPage(ctx, sub);
  });
}

export function createRedditApp(base: RedditBase): SiteApp<RedditState> {
  // In this order: a route is matched by the first pattern that fits.
  const router = new Router<RedditState>();
  for (const routes of [pageRoutes, submissionRoutes, userRoutes, forumRoutes]) routes(router);
  return {
    name: 'reddit',
    basePath: '',
    freshState: () => new RedditState(base),
    router,
    errorPage: (state, status, message) =>
      html`<!DOCTYPE html>
        <html>
          <head>
            <title>Error ${status} — Postmill</title>
          </head>
          <body>
            <h1>Error ${status}</h1>
            <p>${message}</p>
            <p><a href="/">Front page</a></p>
          </body>
        </html>`,
  };
}
