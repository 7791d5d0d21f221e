/**
 * The code forge (modelled on WebArena's GitLab): dashboard, explore, search, projects with issues
 * (filters, labels, assignees, due dates, comments, close), merge requests, members and labels,
 * project creation, stars, profiles with status and website, follows. Selectors WebArena's
 * evaluators rely on (`data-qa-selector="title_content"`, `.block.assignee`, the members table)
 * are reproduced.
 */
import { html, type Html } from '../../html';
import { intParam, notFound, pageNumber, redirect, Router, type RequestContext } from '../../http/router';
import type { SiteApp } from '../../http/siteServer';
import { longDate, mediumDate, paginate, withQuery } from '../common';
import { projectPath, projectPathFromName, ROLES, type Issue, type Label, type MergeRequest, type Project, type Role } from './data';
import { GitlabState, type GitlabBase } from './state';

type Ctx = RequestContext<GitlabState>;

const STYLE = `body{font-family:-apple-system,Segoe UI,Arial,sans-serif;margin:0;color:#303030;font-size:14px}a{color:#1f75cb;text-decoration:none}
.navbar{display:flex;gap:16px;align-items:center;background:#292961;padding:8px 16px}.navbar a{color:#fff}.navbar form{margin-left:8px}#search{width:260px}
.layout-page{display:flex}.nav-sidebar{width:210px;flex:none;background:#f8f8f8;border-right:1px solid #ddd;min-height:90vh;padding:8px 0}.nav-sidebar ul{list-style:none;padding:0;margin:0}
.nav-sidebar li a{display:block;padding:5px 16px}.content-wrapper{flex:1;min-width:0;padding:12px 20px}.flash-notice{background:#e9f3fc;padding:8px 20px}
.issuable-list{list-style:none;padding:0}.issuable-list li{border-bottom:1px solid #eee;padding:6px 0}.gl-label{background:#eee;border-radius:8px;padding:0 6px;font-size:12px;margin-left:4px}
.issuable-layout{display:flex;gap:20px}.issuable-main{flex:1;min-width:0}.right-sidebar{width:260px;flex:none;border-left:1px solid #eee;padding-left:12px}.block{border-bottom:1px solid #eee;padding:8px 0}
.block .title{font-weight:bold}.nav-tabs{display:flex;gap:14px;list-style:none;padding:0}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:6px;text-align:left}
.field{margin:6px 0}label{display:inline-block;min-width:150px;font-weight:bold}
.issue-title-text,.merge-request-title-text,a.project,.todo a{display:inline-block}.note{border-bottom:1px solid #f0f0f0;padding:6px 0}`;

function layout(ctx: Ctx, title: string, main: Html, sidebar?: Html): Html {
  const s = ctx.state;
  const flash = s.takeFlash();
  const me = s.me;
  return html`<!DOCTYPE html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>${title} · GitLab</title>
        <style>
          ${STYLE}
        </style>
      </head>
      <body>
        <header class="navbar">
          <a href="/" class="tanuki-logo" title="Dashboard">GitLab</a><a href="/">Projects</a><a href="/explore">Explore</a>
          <form action="/search" method="get" class="search-form">
            <input type="search" id="search" name="search" placeholder="Search GitLab" autocomplete="off" />
          </form>
          <a href="/projects/new" title="New project">New project</a><a href="/dashboard/issues?assignee_username=${me.username}" title="Issues">Issues</a>
          <a href="/dashboard/merge_requests?assignee_username=${me.username}" title="Merge requests">Merge requests</a
          ><a href="/dashboard/todos" title="To-Do List">To-Do List</a>
          <a href="/${me.username}" class="header-user-dropdown-toggle" title="${me.name}">${me.name}</a
          ><a href="/-/profile" title="Edit profile">Edit profile</a>
        </header>
        ${flash ? html`<div class="flash-notice" role="alert">${flash}</div>` : ''}
        <div class="layout-page">
          ${sidebar ?? ''}
          <main class="content-wrapper" id="content-body">${main}</main>
        </div>
      </body>
    </html>`;
}

function projectSidebar(ctx: Ctx, p: Project): Html {
  const base = `/${projectPath(p)}`;
  const open = ctx.state.projectIssues(p.id).filter((i) => i.state === 'opened').length;
  const mrs = ctx.state.projectMergeRequests(p.id).filter((m) => m.state === 'opened').length;
  return html`<aside class="nav-sidebar" aria-label="Project navigation">
    <ul>
      <li class="context-header">
        <a href="${base}" title="${p.name}"><strong>${p.name}</strong></a>
      </li>
      <li><a href="${base}" class="shortcuts-project">Project information</a></li>
      <li><a href="${base}/-/project_members">Members</a></li>
      <li><a href="${base}/-/commits">Repository</a></li>
      <li>
        <a href="${base}/-/issues" class="shortcuts-issues">Issues <span class="badge count issue_counter">${open}</span></a>
      </li>
      <li><a href="${base}/-/labels">Labels</a></li>
      <li>
        <a href="${base}/-/merge_requests" class="shortcuts-merge_requests">Merge requests <span class="badge count merge_counter">${mrs}</span></a>
      </li>
    </ul>
  </aside>`;
}

function projectRow(ctx: Ctx, p: Project): Html {
  return html`<li class="project-row">
    <a class="project" href="/${projectPath(p)}">${p.namespace} / ${p.name}</a> <span class="visibility" title="${p.visibility}">${p.visibility}</span>
    <span class="star-count" title="Stars">★ ${ctx.state.stars(p)}</span>
    <p class="description">${p.description}</p>
  </li>`;
}

function projectList(ctx: Ctx, title: string, projects: Project[], tabs: Html): Html {
  const { items, pages, page } = paginate(projects, pageNumber(ctx.query, 'page'), 20);
  return layout(
    ctx,
    title,
    html`<h1>${title}</h1>
      ${tabs}
      <ul class="projects-list issuable-list">
        ${items.map((p) => projectRow(ctx, p))}
      </ul>
      ${pages > 1 ? html`<nav class="pagination">${page > 1 ? html`<a href="${withQuery(ctx.url.pathname, ctx.query, { page: String(page - 1) })}">Prev</a> ` : ''}Page ${page} of ${pages}${page < pages ? html` <a href="${withQuery(ctx.url.pathname, ctx.query, { page: String(page + 1) })}">Next</a>` : ''}</nav>` : ''}`,
  );
}

function dashboardTabs(current: string): Html {
  const tabs: [string, string][] = [
    ['/', 'Yours'],
    ['/dashboard/projects/starred', 'Starred'],
    ['/explore', 'Explore'],
  ];
  return html`<ul class="nav-tabs">
    ${tabs.map(([href, label]) => (href === current ? html`<li class="active"><strong>${label}</strong></li>` : html`<li><a href="${href}">${label}</a></li>`))}
  </ul>`;
}

function explore(ctx: Ctx): Html {
  const sort = ctx.query.get('sort') ?? 'stars_desc';
  const all = ctx.state.projects.all();
  const sorted =
    sort === 'name_asc'
      ? all.sort((a, b) => a.name.localeCompare(b.name))
      : sort === 'created_desc'
        ? all.sort((a, b) => b.created.localeCompare(a.created))
        : all.sort((a, b) => ctx.state.stars(b) - ctx.state.stars(a) || a.id - b.id);
  const sorts: [string, string][] = [
    ['stars_desc', 'Most stars'],
    ['name_asc', 'Name'],
    ['created_desc', 'Last created'],
  ];
  return projectList(
    ctx,
    'Explore projects',
    sorted,
    html`${dashboardTabs('/explore')}
      <div class="sort-links">
        Sort by: ${sorts.map(([k, label]) => (k === sort ? html`<strong>${label}</strong> ` : html`<a href="/explore?sort=${k}">${label}</a> `))}
      </div>`,
  );
}

function issueRow(ctx: Ctx, p: Project, i: Issue): Html {
  const base = `/${projectPath(p)}`;
  return html`<li class="issue" data-iid="${i.iid}">
    <a class="issue-title-text" href="${base}/-/issues/${i.iid}">${i.title}</a> <span class="issuable-reference">${p.namespace}/${p.path}#${i.iid}</span> ·
    created ${longDate(i.created)} by
    <a href="/${i.author}">${ctx.state.user(i.author)?.name ?? i.author}</a>
    ${i.labels.map((l) => html`<a class="gl-label" href="${base}/-/issues?${new URLSearchParams({ label_name: l }).toString()}">${l}</a>`)}
    ${i.state === 'closed' ? html`<span class="issuable-status">CLOSED</span>` : ''}
    ${i.assignees.length ? html`<span class="assignee">Assignee: ${i.assignees.map((a) => ctx.state.user(a)?.name ?? a).join(', ')}</span>` : ''}
  </li>`;
}

function issuesList(ctx: Ctx, p: Project): Html {
  const s = ctx.state;
  const base = `/${projectPath(p)}`;
  const state = ctx.query.get('state') ?? 'opened';
  const label = ctx.query.get('label_name') ?? '';
  const search = ctx.query.get('search') ?? '';
  const assignee = ctx.query.get('assignee_username') ?? '';
  const all = s.projectIssues(p.id);
  const scoped = s.filterIssues(all, { state: 'all', label, search, assignee });
  const issues = s.filterIssues(scoped, { state });
  const { items, pages, page } = paginate(issues, pageNumber(ctx.query, 'page'), 20);
  const tab = (st: string, text: string) => {
    const count = s.filterIssues(scoped, { state: st }).length;
    return st === state
      ? html`<li class="active">
          <strong>${text} <span class="badge">${count}</span></strong>
        </li>`
      : html`<li>
          <a href="${withQuery(`${base}/-/issues`, ctx.query, { state: st, page: null })}">${text} <span class="badge">${count}</span></a>
        </li>`;
  };
  return layout(
    ctx,
    `Issues · ${p.name}`,
    html`<h1>Issues</h1>
      <ul class="nav-tabs issues-state-filters">
        ${tab('opened', 'Open')}${tab('closed', 'Closed')}${tab('all', 'All')}
      </ul>
      <div class="issues-filters">
        <form method="get" action="${base}/-/issues">
          <input type="hidden" name="state" value="${state}" />${label ? html`<input type="hidden" name="label_name" value="${label}" />` : ''}
          <input type="search" name="search" id="issue-search" placeholder="Search or filter results..." value="${search}" />
        </form>
        <a href="${base}/-/issues/new" class="new-issue-link" title="New issue">New issue</a>
      </div>
      ${label ? html`<p class="filtered-search-token">Label is ${label}</p>` : ''}
      <ul class="issuable-list issues-list">
        ${items.map((i) => issueRow(ctx, p, i))}
      </ul>
      ${pages > 1 ? html`<nav class="pagination">${page > 1 ? html`<a href="${withQuery(`${base}/-/issues`, ctx.query, { page: String(page - 1) })}">Prev</a> ` : ''}Page ${page} of ${pages}${page < pages ? html` <a href="${withQuery(`${base}/-/issues`, ctx.query, { page: String(page + 1) })}">Next</a>` : ''}</nav>` : ''}`,
    projectSidebar(ctx, p),
  );
}

function people(ctx: Ctx, usernames: string[]): Html {
  return html`${usernames.map((u) => html`<a href="/${u}" class="author-link"><span class="author">${ctx.state.user(u)?.name ?? u}</span></a> <span class="username">@${u}</span> `)}`;
}

function notesList(ctx: Ctx, notes: Issue['notes']): Html {
  return html`<ul id="notes-list" class="notes main-notes-list timeline">
    ${notes.map(
      (n) =>
        html`<li class="note timeline-entry">
          <div class="note-header"><a href="/${n.author}">${ctx.state.user(n.author)?.name ?? n.author}</a> @${n.author} · ${longDate(n.date)}</div>
          <div class="timeline-discussion-body">${n.body}</div>
        </li>`,
    )}
  </ul>`;
}

function issuePage(ctx: Ctx, p: Project, i: Issue): Html {
  const base = `/${projectPath(p)}/-/issues/${i.iid}`;
  const me = ctx.state.me.username;
  return layout(
    ctx,
    `${i.title} (#${i.iid}) · Issues`,
    html`<div class="issuable-layout">
      <div class="issuable-main">
        <div class="detail-page-header">
          <span data-testid="issue-state-badge" class="issuable-status-badge">${i.state === 'opened' ? 'Open' : 'Closed'}</span> Issue created
          ${longDate(i.created)} by ${people(ctx, [i.author])}
          <form method="post" action="${base}/${i.state === 'opened' ? 'close' : 'reopen'}" class="issue-state-form">
            <button type="submit" data-testid="close-reopen-button">${i.state === 'opened' ? 'Close issue' : 'Reopen issue'}</button>
          </form>
          <a href="${base}/edit" class="js-issuable-edit">Edit</a>
        </div>
        <h1 class="title" data-qa-selector="title_content">${i.title}</h1>
        <div class="description"><p>${i.description}</p></div>
        <section id="notes">
          ${notesList(ctx, i.notes)}
          <form method="post" action="${base}/notes" class="new-note">
            <textarea name="note[note]" id="note-body" placeholder="Write a comment or drag your files here…" rows="3" cols="70"></textarea>
            <button type="submit" data-testid="comment-button">Comment</button>
          </form>
        </section>
      </div>
      <aside class="right-sidebar">
        <div class="block assignee">
          <div class="title">Assignee</div>
          <div class="value">
            ${i.assignees.length ? people(ctx, i.assignees) : html`<span class="no-value">None</span>`}
            ${i.assignees.includes(me) ? '' : html`<form method="post" action="${base}/assign_self"><button type="submit" class="assign-yourself">assign yourself</button></form>`}
          </div>
        </div>
        <div class="block labels">
          <div class="title">Labels</div>
          <div class="value">${i.labels.length ? i.labels.map((l) => html`<span class="gl-label">${l}</span>`) : html`<span class="no-value">None</span>`}</div>
        </div>
        <div class="block due_date">
          <div class="title">Due date</div>
          <div class="value" data-testid="sidebar-due-date">${i.dueDate ? mediumDate(i.dueDate) : 'None'}</div>
        </div>
        <div class="block reference">
          <div class="title">Reference</div>
          <div class="value">${p.namespace}/${p.path}#${i.iid}</div>
        </div>
      </aside>
    </div>`,
    projectSidebar(ctx, p),
  );
}

function issueForm(ctx: Ctx, p: Project, action: string, i: Partial<Issue>, submit: string): Html {
  return html`<form method="post" action="${action}" class="issue-form">
    <div class="field">
      <label for="issue_title">Title</label><input type="text" name="issue[title]" id="issue_title" value="${i.title ?? ''}" size="70" required />
    </div>
    <div class="field">
      <label for="issue_description">Description</label
      ><textarea name="issue[description]" id="issue_description" rows="5" cols="70">${i.description ?? ''}</textarea>
    </div>
    <div class="field">
      <label for="issue_assignee_id">Assignee</label
      ><select name="issue[assignee]" id="issue_assignee_id">
        ${html`<option value="">Unassigned</option>
          ${p.members.map((m) => html`<option value="${m.username}" ${i.assignees?.includes(m.username) ? 'selected' : ''}>${ctx.state.user(m.username)?.name ?? m.username}</option>`)}`}
      </select>
    </div>
    <div class="field">
      <label for="issue_label">Label</label
      ><select name="issue[label]" id="issue_label">
        <option value="">None</option>
        ${p.labels.map((l) => html`<option value="${l.name}" ${i.labels?.includes(l.name) ? 'selected' : ''}>${l.name}</option>`)}
      </select>
    </div>
    <div class="field">
      <label for="issue_due_date">Due date</label
      ><input type="text" name="issue[due_date]" id="issue_due_date" placeholder="YYYY-MM-DD" value="${i.dueDate ?? ''}" />
    </div>
    <button type="submit" data-testid="issuable-create-button">${submit}</button>
  </form>`;
}

function readIssueForm(ctx: Ctx, p: Project): Pick<Issue, 'title' | 'description' | 'assignees' | 'labels' | 'dueDate'> | undefined {
  const f = ctx.form;
  const title = (f.get('issue[title]') ?? '').trim();
  if (!title) return undefined;
  const assignee = f.get('issue[assignee]') ?? '';
  const label = f.get('issue[label]') ?? '';
  const due = (f.get('issue[due_date]') ?? '').trim();
  return {
    title,
    description: (f.get('issue[description]') ?? '').trim(),
    assignees: p.members.some((m) => m.username === assignee) ? [assignee] : [],
    labels: p.labels.some((l) => l.name === label) ? [label] : [],
    dueDate: /^\d{4}-\d{2}-\d{2}$/.test(due) ? due : null,
  };
}

function mrPage(ctx: Ctx, p: Project, m: MergeRequest): Html {
  const base = `/${projectPath(p)}`;
  return layout(
    ctx,
    `${m.title} (!${m.iid}) · Merge requests`,
    html`<div class="issuable-layout">
      <div class="issuable-main">
        <div class="detail-page-header">
          <span data-testid="mr-state-badge" class="issuable-status-badge">${m.state === 'opened' ? 'Open' : m.state === 'merged' ? 'Merged' : 'Closed'}</span>
          Created ${longDate(m.created)} by ${people(ctx, [m.author])}
        </div>
        <h1 class="title" data-qa-selector="title_content">${m.title}</h1>
        <div class="detail-page-description">
          <span>${ctx.state.user(m.author)?.name ?? m.author} requested to merge</span>
          <a class="gl-font-monospace" href="${base}/-/tree/${m.source}">${m.source}</a> <span>into</span>
          <a class="gl-font-monospace" href="${base}/-/tree/${m.target}">${m.target}</a>
        </div>
        <section id="notes">
          ${notesList(ctx, m.notes)}
          <form method="post" action="${base}/-/merge_requests/${m.iid}/notes" class="new-note">
            <textarea name="note[note]" id="note-body" placeholder="Write a comment or drag your files here…" rows="3" cols="70"></textarea>
            <button type="submit" data-testid="comment-button">Comment</button>
          </form>
        </section>
      </div>
      <aside class="right-sidebar">
        <div class="block assignee">
          <div class="title">Assignee</div>
          <div class="value">${m.assignees.length ? people(ctx, m.assignees) : 'None'}</div>
        </div>
        <div class="block reviewer">
          <div class="title">Reviewer</div>
          <div class="value">${m.reviewers.length ? people(ctx, m.reviewers) : 'None'}</div>
        </div>
      </aside>
    </div>`,
    projectSidebar(ctx, p),
  );
}

function mrList(ctx: Ctx, p: Project): Html {
  const state = ctx.query.get('state') ?? 'opened';
  const all = ctx.state.projectMergeRequests(p.id);
  const list = all.filter((m) => state === 'all' || m.state === state);
  const base = `/${projectPath(p)}/-/merge_requests`;
  const tab = (st: string, text: string) => {
    const count = all.filter((m) => st === 'all' || m.state === st).length;
    return st === state
      ? html`<li class="active">
          <strong>${text} <span class="badge">${count}</span></strong>
        </li>`
      : html`<li>
          <a href="${base}?state=${st}">${text} <span class="badge">${count}</span></a>
        </li>`;
  };
  return layout(
    ctx,
    `Merge requests · ${p.name}`,
    html`<h1>Merge requests</h1>
      <ul class="nav-tabs">
        ${tab('opened', 'Open')}${tab('merged', 'Merged')}${tab('closed', 'Closed')}${tab('all', 'All')}
      </ul>
      <ul class="issuable-list mr-list">
        ${list.map((m) => html`<li class="merge-request" data-iid="${m.iid}"><a class="merge-request-title-text" href="${base}/${m.iid}">${m.title}</a> !${m.iid} · ${m.source} → ${m.target} · by ${ctx.state.user(m.author)?.name ?? m.author}</li>`)}
      </ul>`,
    projectSidebar(ctx, p),
  );
}

function membersPage(ctx: Ctx, p: Project): Html {
  const base = `/${projectPath(p)}`;
  return layout(
    ctx,
    `Members · ${p.name}`,
    html`<h1>Project members</h1>
      <form method="post" action="${base}/-/project_members" class="invite-members-form">
        <label for="invite_member_username">Username or name</label
        ><input type="text" name="username" id="invite_member_username" placeholder="Search for a user" />
        <label for="invite_member_access_level">Select a role</label
        ><select name="access_level" id="invite_member_access_level">
          ${ROLES.filter((r) => r !== 'Owner').map((r) => html`<option value="${r}">${r}</option>`)}
        </select>
        <button type="submit" data-testid="invite-button">Invite</button>
      </form>
      <table class="members-table" data-testid="members-table">
        <thead>
          <tr>
            <th>Account</th>
            <th>Source</th>
            <th>Max role</th>
          </tr>
        </thead>
        <tbody>
          ${p.members.map(
            (m) =>
              html`<tr>
                <td data-label="Account">
                  <a href="/${m.username}"
                    ><span class="gl-avatar-labeled-label">${ctx.state.user(m.username)?.name ?? m.username}</span>
                    <span class="gl-avatar-labeled-sublabel">@${m.username}</span></a
                  >
                </td>
                <td data-label="Source">Direct member</td>
                <td class="col-max-role" data-label="Max role"><span>${m.role}</span></td>
              </tr>`,
          )}
        </tbody>
      </table>`,
    projectSidebar(ctx, p),
  );
}

function labelsPage(ctx: Ctx, p: Project): Html {
  const base = `/${projectPath(p)}`;
  return layout(
    ctx,
    `Labels · ${p.name}`,
    html`<h1>Labels</h1>
      <ul class="labels-list issuable-list">
        ${p.labels.map(
          (l) =>
            html`<li class="label-list-item">
              <a class="gl-label-text" href="${base}/-/issues?${new URLSearchParams({ label_name: l.name }).toString()}">${l.name}</a>
              <span class="label-description">${l.description}</span>
            </li>`,
        )}
      </ul>
      <h2>New label</h2>
      <form method="post" action="${base}/-/labels">
        <div class="field"><label for="label_title">Title</label><input type="text" name="label[title]" id="label_title" /></div>
        <div class="field"><label for="label_description">Description</label><input type="text" name="label[description]" id="label_description" /></div>
        <div class="field"><label for="label_color">Background color</label><input type="text" name="label[color]" id="label_color" value="#6699cc" /></div>
        <button type="submit" data-testid="create-label">Create label</button>
      </form>`,
    projectSidebar(ctx, p),
  );
}

function projectHome(ctx: Ctx, p: Project): Html {
  const starred = ctx.state.starred.has(p.id);
  const base = `/${projectPath(p)}`;
  return layout(
    ctx,
    p.name,
    html`<div class="project-home-panel">
      <h1 class="project-title" data-testid="project-name-content">
        ${p.name} <span class="visibility-icon" title="${p.visibility}">${p.visibility === 'Public' ? '🌐' : '🔒'}</span>
      </h1>
      <p class="project-id">Project ID: ${p.id}</p>
      <div class="project-description">${p.description}</div>
      <form method="post" action="${base}/-/star" class="star-form">
        <button type="submit" class="star-btn" title="${starred ? 'Unstar' : 'Star'}">${starred ? 'Unstar' : 'Star'}</button>
        <span class="star-count">${ctx.state.stars(p)}</span>
      </form>
      <ul class="project-stats">
        <li>${ctx.state.projectIssues(p.id).length} Issues</li>
        <li>${p.branches.length} Branches</li>
        <li>${p.members.length} Members</li>
      </ul>
      <div class="readme-holder">
        <h2>README.md</h2>
        <p>${p.description}</p>
      </div>
    </div>`,
    projectSidebar(ctx, p),
  );
}

function userPage(ctx: Ctx, username: string): Html {
  const s = ctx.state;
  const user = s.user(username) ?? notFound(`user ${username}`);
  const isMe = user.username === s.me.username;
  const projects = s.projects.filter((p) => p.namespace === user.username);
  const profile = isMe ? s.profile : { status: '', website: '', bio: '' };
  return layout(
    ctx,
    user.name,
    html`<div class="profile-header user-profile">
        <h1 class="cover-title">${user.name}</h1>
        <p class="cover-desc">@${user.username}</p>
        ${profile.status ? html`<div class="cover-status"><span class="emoji">💬</span>${profile.status}</div>` : ''}
        ${profile.website ? html`<p class="profile-link"><a itemprop="url" href="${profile.website}">${profile.website.replace(/^https?:\/\//, '')}</a></p>` : ''}${profile.bio ? html`<p class="profile-user-bio">${profile.bio}</p>` : ''}
        ${isMe ? '' : html`<form method="post" action="/users/${user.username}/follow"><button type="submit" class="follow-btn">${s.following.has(user.username) ? 'Unfollow' : 'Follow'}</button></form>`}
        <ul class="nav-tabs">
          <li><a href="/${user.username}">Overview</a></li>
          <li><a href="/users/${user.username}/starred">Starred projects</a></li>
          <li><a href="/users/${user.username}/following">Following</a></li>
        </ul>
      </div>
      <h2>Personal projects</h2>
      <ul class="projects-list issuable-list">
        ${projects.map((p) => projectRow(ctx, p))}
      </ul>`,
  );
}

function dashboardIssues(ctx: Ctx): Html {
  const s = ctx.state;
  const state = ctx.query.get('state') ?? 'opened';
  const assignee = ctx.query.get('assignee_username') ?? '';
  const author = ctx.query.get('author_username') ?? '';
  const issues = s.filterIssues(s.issues.all(), { state, assignee, author });
  return layout(
    ctx,
    'Issues',
    html`<h1>Issues</h1>
      <p class="filters">${assignee ? `Assignee = ${assignee}` : ''} ${author ? `Author = ${author}` : ''}</p>
      <ul class="issuable-list">
        ${issues.map((i) => {
          const p = s.projects.get(i.projectId);
          return p ? issueRow(ctx, p, i) : '';
        })}
      </ul>`,
  );
}

function dashboardMergeRequests(ctx: Ctx): Html {
  const s = ctx.state;
  const assignee = ctx.query.get('assignee_username') ?? '';
  const reviewer = ctx.query.get('reviewer_username') ?? '';
  const list = s.mergeRequests.filter(
    (m) => m.state === 'opened' && (!assignee || m.assignees.includes(assignee)) && (!reviewer || m.reviewers.includes(reviewer)),
  );
  return layout(
    ctx,
    'Merge requests',
    html`<h1>Merge requests</h1>
      <ul class="nav-tabs">
        <li><a href="/dashboard/merge_requests?assignee_username=${s.me.username}">Assigned to you</a></li>
        <li><a href="/dashboard/merge_requests?reviewer_username=${s.me.username}">Review requests for you</a></li>
      </ul>
      <ul class="issuable-list">
        ${list.map((m) => {
          const p = s.projects.get(m.projectId);
          return p
            ? html`<li class="merge-request"><a href="/${projectPath(p)}/-/merge_requests/${m.iid}">${m.title}</a> ${p.namespace}/${p.path}!${m.iid}</li>`
            : '';
        })}
      </ul>`,
  );
}

function todos(ctx: Ctx): Html {
  const s = ctx.state;
  const me = s.me.username;
  const items = [
    ...s.issues
      .filter((i) => i.state === 'opened' && i.assignees.includes(me))
      .map((i) => ({ p: s.projects.get(i.projectId), text: `assigned you issue #${i.iid} "${i.title}"`, href: `/-/issues/${i.iid}` })),
    ...s.mergeRequests
      .filter((m) => m.state === 'opened' && m.reviewers.includes(me))
      .map((m) => ({ p: s.projects.get(m.projectId), text: `requested your review of !${m.iid} "${m.title}"`, href: `/-/merge_requests/${m.iid}` })),
  ];
  return layout(
    ctx,
    'To-Do List',
    html`<h1>To-Do List</h1>
      <ul class="todos-list issuable-list">
        ${items.map((t) => (t.p ? html`<li class="todo"><a href="/${projectPath(t.p)}${t.href}">${t.p.name}: ${t.text}</a></li>` : ''))}
      </ul>`,
  );
}

function searchPage(ctx: Ctx): Html {
  const s = ctx.state;
  const q = ctx.query.get('search') ?? '';
  const scope = ctx.query.get('scope') ?? 'projects';
  const projects = s.searchProjects(q);
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  const issues = words.length ? s.filterIssues(s.issues.all(), { state: 'all', search: q }) : [];
  const tab = (sc: string, label: string, n: number) =>
    sc === scope
      ? html`<li class="active">
          <strong>${label} <span class="badge">${n}</span></strong>
        </li>`
      : html`<li>
          <a href="/search?${new URLSearchParams({ search: q, scope: sc }).toString()}">${label} <span class="badge">${n}</span></a>
        </li>`;
  return layout(
    ctx,
    `Search: ${q}`,
    html`<h1>Search results for "${q}"</h1>
      <ul class="nav-tabs search-filter">
        ${tab('projects', 'Projects', projects.length)}${tab('issues', 'Issues', issues.length)}
      </ul>
      <ul class="issuable-list search-results">
        ${
          scope === 'issues'
            ? issues.map((i) => {
                const p = s.projects.get(i.projectId);
                return p ? issueRow(ctx, p, i) : '';
              })
            : projects.map((p) => projectRow(ctx, p))
        }
      </ul>`,
  );
}

function newProjectPage(ctx: Ctx): Html {
  return layout(
    ctx,
    'New project',
    html`<h1>Create blank project</h1>
      <form method="post" action="/projects" class="new-project-form">
        <div class="field">
          <label for="project_name">Project name</label><input type="text" name="project[name]" id="project_name" placeholder="My awesome project" required />
        </div>
        <div class="field">
          <label for="project_path">Project slug</label><input type="text" name="project[path]" id="project_path" placeholder="my-awesome-project" />
        </div>
        <div class="field">
          <label for="project_template">Template</label
          ><select name="project[template]" id="project_template">
            <option value="">None</option>
            ${['Android', 'iOS (Swift)', 'Ruby on Rails', 'NodeJS Express', 'Pages/Plain HTML'].map((t) => html`<option value="${t}">${t}</option>`)}
          </select>
        </div>
        <fieldset>
          <legend>Visibility Level</legend>
          ${(
            [
              ['0', 'Private'],
              ['10', 'Internal'],
              ['20', 'Public'],
            ] as const
          ).map(
            ([v, label]) =>
              html`<input
                  type="radio"
                  name="project[visibility_level]"
                  value="${label}"
                  id="project_visibility_level_${v}"
                  ${label === 'Private' ? 'checked' : ''}
                />
                <label for="project_visibility_level_${v}">${label}</label> `,
          )}
        </fieldset>
        <div class="field">
          <input type="checkbox" name="project[initialize_with_readme]" id="project_initialize_with_readme" value="1" checked />
          <label for="project_initialize_with_readme">Initialize repository with a README</label>
        </div>
        <button type="submit" data-testid="project-create-button">Create project</button>
      </form>`,
  );
}

function createProject(ctx: Ctx) {
  const s = ctx.state;
  const f = ctx.form;
  const name = (f.get('project[name]') ?? '').trim();
  const path = projectPathFromName((f.get('project[path]') ?? '').trim() || name);
  const me = s.me.username;
  if (!name || !path || s.projectAt(me, path)) {
    s.flash = name ? 'Project path has already been taken.' : "Project name can't be blank.";
    return redirect('/projects/new');
  }
  const visibility = f.get('project[visibility_level]');
  const id = s.projects.allocateId();
  const labels: Label[] = [
    { name: 'bug', color: '#d9534f', description: 'Something is not working' },
    { name: 'documentation', color: '#428bca', description: 'Improvements or additions to documentation' },
  ];
  s.projects.set(id, {
    id,
    namespace: me,
    name,
    path,
    description: '',
    visibility: visibility === 'Public' || visibility === 'Internal' ? visibility : 'Private',
    stars: 0,
    created: s.clock.now(),
    members: [{ username: me, role: 'Owner' }],
    labels,
    branches: ['main'],
    template: f.get('project[template]') || null,
  });
  s.flash = `Project '${name}' was successfully created.`;
  return redirect(`/${me}/${path}`);
}

/** Resolves `/:ns/:project/...` to the project or 404s. */
function project(ctx: Ctx): Project {
  return ctx.state.projectAt(ctx.params.ns ?? '', ctx.params.project ?? '') ?? notFound(`project ${ctx.params.ns}/${ctx.params.project}`);
}

function issueOf(ctx: Ctx, p: Project): Issue {
  const iid = intParam(ctx.params, 'iid');
  return ctx.state.issues.find((i) => i.projectId === p.id && i.iid === iid) ?? notFound(`issue #${iid}`);
}

function changeIssue(ctx: Ctx, change: (i: Issue) => Issue, message: string) {
  const p = project(ctx);
  const issue = issueOf(ctx, p);
  ctx.state.issues.set(issue.id, { ...change(issue), updated: ctx.state.clock.now() });
  ctx.state.flash = message;
  return redirect(`/${projectPath(p)}/-/issues/${issue.iid}`);
}

/** The dashboard, explore, search and new-project pages. */
function dashboardRoutes(router: Router<GitlabState>): void {
  router
    .get('/', (ctx) => projectList(ctx, 'Projects', ctx.state.myProjects(), dashboardTabs('/')))
    .get('/dashboard/projects', (ctx) => projectList(ctx, 'Projects', ctx.state.myProjects(), dashboardTabs('/')))
    .get('/dashboard/projects/starred', (ctx) =>
      projectList(
        ctx,
        'Starred projects',
        ctx.state.projects.filter((p) => ctx.state.starred.has(p.id)),
        dashboardTabs('/dashboard/projects/starred'),
      ),
    )
    .get('/explore', explore)
    .get('/explore/projects', explore)
    .get('/dashboard/issues', dashboardIssues)
    .get('/dashboard/merge_requests', dashboardMergeRequests)
    .get('/dashboard/todos', todos)
    .get('/search', searchPage)
    .get('/projects/new', newProjectPage)
    .post('/projects', createProject);
}

/** The profile and users' pages: starred projects, following, follow. */
function userRoutes(router: Router<GitlabState>): void {
  router
    .get('/-/profile', (ctx) => {
      const pr = ctx.state.profile;
      return layout(
        ctx,
        'Edit Profile',
        html`<h1>Edit Profile</h1>
          <form method="post" action="/-/profile" class="edit-user">
            <div class="field">
              <label for="user_status_message">Your status</label
              ><input type="text" name="user[status][message]" id="user_status_message" placeholder="What's your status?" value="${pr.status}" />
            </div>
            <div class="field">
              <label for="user_website_url">Website url</label
              ><input type="text" name="user[website_url]" id="user_website_url" placeholder="https://website.com" value="${pr.website}" />
            </div>
            <div class="field"><label for="user_bio">Bio</label><textarea name="user[bio]" id="user_bio" rows="3" cols="60">${pr.bio}</textarea></div>
            <button type="submit" data-testid="update-profile">Update profile settings</button>
          </form>`,
      );
    })
    .post('/-/profile', (ctx) => {
      const website = (ctx.form.get('user[website_url]') ?? '').trim();
      ctx.state.profile = {
        status: (ctx.form.get('user[status][message]') ?? '').trim(),
        website: website && !/^https?:\/\//.test(website) ? `https://${website}` : website,
        bio: (ctx.form.get('user[bio]') ?? '').trim(),
      };
      ctx.state.flash = 'Profile was successfully updated';
      return redirect('/-/profile');
    })
    .get('/users/:user/starred', (ctx) => {
      const s = ctx.state;
      if (ctx.params.user !== s.me.username) return projectList(ctx, 'Starred projects', [], html``);
      return projectList(
        ctx,
        `${s.me.name} · Starred projects`,
        s.projects.filter((p) => s.starred.has(p.id)),
        html``,
      );
    })
    .get('/users/:user/following', (ctx) => {
      const s = ctx.state;
      const list = ctx.params.user === s.me.username ? s.following.all() : [];
      return layout(
        ctx,
        'Following',
        html`<div class="user-profile">
          <h1>Following</h1>
          <ul>
            ${list.map((u) => html`<li><a href="/${u}">${s.user(u)?.name ?? u}</a> @${u}</li>`)}
          </ul>
        </div>`,
      );
    })
    .post('/users/:user/follow', (ctx) => {
      const s = ctx.state;
      const user = s.user(ctx.params.user ?? '') ?? notFound('user');
      if (s.following.has(user.username)) s.following.delete(user.username);
      else s.following.set(user.username, user.username);
      return redirect(`/${user.username}`);
    });
}

/** A user's or project's page, starring a project, its commits. */
function projectRoutes(router: Router<GitlabState>): void {
  router
    .get('/:ns', (ctx) => userPage(ctx, ctx.params.ns ?? ''))
    .get('/:ns/:project', (ctx) => projectHome(ctx, project(ctx)))
    .post('/:ns/:project/-/star', (ctx) => {
      const p = project(ctx);
      if (ctx.state.starred.has(p.id)) ctx.state.starred.delete(p.id);
      else ctx.state.starred.set(p.id, p.id);
      return redirect(`/${projectPath(p)}`);
    })
    .get('/:ns/:project/-/commits', (ctx) => {
      const p = project(ctx);
      const message = p.template ? `Initialized from '${p.template}' project template` : 'Initial commit';
      return layout(
        ctx,
        `Commits · ${p.name}`,
        html`<h1>Commits</h1>
          <ul class="content-list commit-list">
            <li class="commit"><span class="commit-row-message">${message}</span> · ${longDate(p.created)}</li>
          </ul>`,
        projectSidebar(ctx, p),
      );
    });
}

/** A project's issues: list, new, page, edit, close, reopen, assign, comment. */
function issueRoutes(router: Router<GitlabState>): void {
  router
    .get('/:ns/:project/-/issues', (ctx) => issuesList(ctx, project(ctx)))
    .get('/:ns/:project/-/issues/new', (ctx) => {
      const p = project(ctx);
      return layout(
        ctx,
        'New Issue',
        html`<h1>New Issue</h1>
          ${issueForm(ctx, p, `/${projectPath(p)}/-/issues`, {}, 'Create issue')}`,
        projectSidebar(ctx, p),
      );
    })
    .post('/:ns/:project/-/issues', (ctx) => {
      const s = ctx.state;
      const p = project(ctx);
      const fields = readIssueForm(ctx, p);
      if (!fields) {
        s.flash = "Title can't be blank";
        return redirect(`/${projectPath(p)}/-/issues/new`);
      }
      const id = s.issues.allocateId();
      const iid = s.projectIssues(p.id).reduce((max, i) => Math.max(max, i.iid), 0) + 1;
      const now = s.clock.now();
      s.issues.set(id, { id, projectId: p.id, iid, ...fields, author: s.me.username, state: 'opened', created: now, updated: now, notes: [] });
      return redirect(`/${projectPath(p)}/-/issues/${iid}`);
    })
    .get('/:ns/:project/-/issues/:iid', (ctx) => {
      const p = project(ctx);
      return issuePage(ctx, p, issueOf(ctx, p));
    })
    .get('/:ns/:project/-/issues/:iid/edit', (ctx) => {
      const p = project(ctx);
      const i = issueOf(ctx, p);
      return layout(
        ctx,
        `Edit issue #${i.iid}`,
        html`<h1>Edit issue #${i.iid}</h1>
          ${issueForm(ctx, p, `/${projectPath(p)}/-/issues/${i.iid}/edit`, i, 'Save changes')}`,
        projectSidebar(ctx, p),
      );
    })
    .post('/:ns/:project/-/issues/:iid/edit', (ctx) => {
      const fields = readIssueForm(ctx, project(ctx));
      return changeIssue(ctx, (i) => (fields ? { ...i, ...fields } : i), fields ? 'The issue was updated.' : "Title can't be blank");
    })
    .post('/:ns/:project/-/issues/:iid/close', (ctx) => changeIssue(ctx, (i) => ({ ...i, state: 'closed' }), 'The issue was closed.'))
    .post('/:ns/:project/-/issues/:iid/reopen', (ctx) => changeIssue(ctx, (i) => ({ ...i, state: 'opened' }), 'The issue was reopened.'))
    .post('/:ns/:project/-/issues/:iid/assign_self', (ctx) =>
      changeIssue(ctx, (i) => ({ ...i, assignees: [...new Set([...i.assignees, ctx.state.me.username])] }), 'You were assigned to the issue.'),
    )
    .post('/:ns/:project/-/issues/:iid/notes', (ctx) => {
      const body = (ctx.form.get('note[note]') ?? '').trim();
      return changeIssue(
        ctx,
        (i) => (body ? { ...i, notes: [...i.notes, { author: ctx.state.me.username, body, date: ctx.state.clock.now() }] } : i),
        body ? 'Your comment was added.' : "Note can't be blank",
      );
    });
}

/** A project's merge requests and their comments. */
function mergeRequestRoutes(router: Router<GitlabState>): void {
  router
    .get('/:ns/:project/-/merge_requests', (ctx) => mrList(ctx, project(ctx)))
    .get('/:ns/:project/-/merge_requests/:iid', (ctx) => {
      const p = project(ctx);
      const iid = intParam(ctx.params, 'iid');
      return mrPage(ctx, p, ctx.state.mergeRequests.find((m) => m.projectId === p.id && m.iid === iid) ?? notFound(`merge request !${iid}`));
    })
    .post('/:ns/:project/-/merge_requests/:iid/notes', (ctx) => {
      const s = ctx.state;
      const p = project(ctx);
      const iid = intParam(ctx.params, 'iid');
      const mr = s.mergeRequests.find((m) => m.projectId === p.id && m.iid === iid) ?? notFound(`merge request !${iid}`);
      const body = (ctx.form.get('note[note]') ?? '').trim();
      if (body) s.mergeRequests.set(mr.id, { ...mr, notes: [...mr.notes, { author: s.me.username, body, date: s.clock.now() }] });
      return redirect(`/${projectPath(p)}/-/merge_requests/${iid}`);
    });
}

/** A project's members and labels. */
function memberAndLabelRoutes(router: Router<GitlabState>): void {
  router
    .get('/:ns/:project/-/project_members', (ctx) => membersPage(ctx, project(ctx)))
    .post('/:ns/:project/-/project_members', (ctx) => {
      const s = ctx.state;
      const p = project(ctx);
      const user = s.findUser(ctx.form.get('username') ?? '');
      const role = ctx.form.get('access_level') as Role;
      if (!user || !ROLES.includes(role)) {
        s.flash = 'Select a known user and a role.';
        return redirect(`/${projectPath(p)}/-/project_members`);
      }
      const others = p.members.filter((m) => m.username !== user.username);
      s.projects.set(p.id, { ...p, members: [...others, { username: user.username, role }] });
      s.flash = `${user.name} was added to the project as ${role}.`;
      return redirect(`/${projectPath(p)}/-/project_members`);
    })
    .get('/:ns/:project/-/labels', (ctx) => labelsPage(ctx, project(ctx)))
    .post('/:ns/:project/-/labels', (ctx) => {
      const s = ctx.state;
      const p = project(ctx);
      const title = (ctx.form.get('label[title]') ?? '').trim();
      if (title && !p.labels.some((l) => l.name === title)) {
        s.projects.set(p.id, {
          ...p,
          labels: [
            ...p.labels,
            { name: title, description: (ctx.form.get('label[description]') ?? '').trim(), color: ctx.form.get('label[color]') ?? '#6699cc' },
          ].sort((a, b) => a.name.localeCompare(b.name)),
        });
        s.flash = 'Label was created.';
      } else s.flash = title ? 'Title has already been taken' : "Title can't be blank";
      return redirect(`/${projectPath(p)}/-/labels`);
    });
}

export function createGitlabApp(base: GitlabBase): SiteApp<GitlabState> {
  // In this order: a route is matched by the first pattern that fits (`/:ns` after the fixed paths).
  const router = new Router<GitlabState>();
  for (const routes of [dashboardRoutes, userRoutes, projectRoutes, issueRoutes, mergeRequestRoutes, memberAndLabelRoutes]) routes(router);
  return {
    name: 'gitlab',
    basePath: '',
    freshState: () => new GitlabState(base),
    router,
    errorPage: (state, status, message) =>
      html`<!DOCTYPE html>
        <html>
          <head>
            <title>${status} · GitLab</title>
          </head>
          <body>
            <h1>${status}</h1>
            <p>${message}</p>
            <p><a href="/">Go back to the dashboard</a></p>
          </body>
        </html>`,
  };
}
