/** Task templates on the code forge (`__GITLAB__`). */
import type { OracleStep } from '../../../browser/contract';
import { mediumDate } from '../../sites/common';
import { projectPath, projectPathFromName, type Issue, type Project } from '../../sites/gitlab/data';
import type { GitlabState } from '../../sites/gitlab/state';
import {
  button,
  byAttr,
  byId,
  click,
  cycle,
  DONE,
  exit,
  firstContaining,
  link,
  programHtml,
  search,
  select,
  stringMatch,
  type,
  urlMatch,
  type TaskTemplate,
} from '../template';

const HOME = '__GITLAB__';

function openProject(p: Project): OracleStep[] {
  return [search(byId('search'), p.name), click(link(`${p.namespace} / ${p.name}`))];
}

/** From the project page to an issue, searching its title among all issues or open ones. */
function openIssue(p: Project, i: Issue, scope: 'all' | 'opened'): OracleStep[] {
  return [
    ...openProject(p),
    click(byAttr('class', 'shortcuts-issues', 'a')),
    ...(scope === 'all' ? [click(link('All'))] : []),
    search(byId('issue-search'), i.title),
    click(link(i.title)),
  ];
}

const issueUrl = (p: Project, i: Issue) => `${HOME}/${projectPath(p)}/-/issues/${i.iid}`;

/** Issues whose title is unique in their project (and, if `open`, open). */
function findableIssues(s: GitlabState, open = false): { p: Project; i: Issue }[] {
  return s.issues
    .filter(
      (i) => (!open || i.state === 'opened') && s.projectIssues(i.projectId).filter((x) => x.title.toLowerCase().includes(i.title.toLowerCase())).length === 1,
    )
    .flatMap((i) => {
      const p = s.projects.get(i.projectId);
      return p ? [{ p, i }] : [];
    });
}

const NEW_ISSUES = [
  '404 for many URLs',
  'Add a contributing guide',
  'Support dark mode in the header',
  'Broken anchor links in the FAQ',
  'Upgrade the test runner',
  'Flaky login test on CI',
  'Typo in the installation guide',
  'Add alt text to the logo',
];
const NOTES = [
  'Good idea',
  'I can take this one.',
  'Fixed in the latest release.',
  'Can you share the steps to reproduce?',
  '@davepgreene please take a look',
  'Duplicate of an older issue.',
];
const NEW_LABELS = ['needs-triage', 'blocked', 'wontfix', 'regression', 'backend', 'frontend', 'ux-review', 'dependencies'];
const NEW_PROJECTS = [
  'awesome-llms',
  'web_agent_android_xl',
  'awesome_llm_reading',
  'Do it myself',
  'weekend-hacks',
  'recipe-scraper',
  'thesis-notes',
  'home-automation',
  'pixel-art-tools',
  'budget-app',
  'dotfiles-backup',
  'reading-list',
  'travel-planner',
  'chess-engine',
  'garden-log',
  'meal-planner',
  'photo-gallery',
  'retro-games',
  'habit-tracker',
  'portfolio-site',
];
const STATUSES = [
  'Enjoying life',
  'Out of office until Monday',
  'Working from home',
  'On vacation',
  'Busy with a release',
  'Learning Rust',
  'Reviewing merge requests',
  'Available for pairing',
  'Focusing, expect slow replies',
  'At a conference',
  'Parental leave',
  'Hiring!',
  'Writing docs today',
  'Sick, back soon',
  'In meetings all day',
  'Open to collaborations',
  'Traveling',
  'On call this week',
  'Taking a break',
  'Shipping it',
];

export const GITLAB_TEMPLATES: TaskTemplate[] = [
  {
    id: 401,
    site: 'gitlab',
    intent: 'How many open issues does the {{project}} project have?',
    drafts: ({ fresh }) =>
      fresh.gitlab.projects.all().map((p) => {
        const n = fresh.gitlab.projectIssues(p.id).filter((i) => i.state === 'opened').length;
        return {
          params: { project: p.name },
          startUrl: HOME,
          eval: stringMatch({ must_include: [String(n)] }),
          oracle: [...openProject(p), click(byAttr('class', 'shortcuts-issues', 'a')), exit(String(n))],
        };
      }),
  },
  {
    id: 402,
    site: 'gitlab',
    intent: 'Who is assigned to the issue "{{title}}" in the {{project}} project?',
    drafts: ({ fresh }) =>
      findableIssues(fresh.gitlab).flatMap(({ p, i }) => {
        const name = i.assignees.length === 1 ? fresh.gitlab.user(i.assignees[0] ?? '')?.name : undefined;
        return name
          ? [
              {
                params: { title: i.title, project: p.name },
                startUrl: HOME,
                eval: stringMatch({ must_include: [name] }),
                oracle: [...openIssue(p, i, 'all'), exit(name)],
              },
            ]
          : [];
      }),
  },
  {
    id: 403,
    site: 'gitlab',
    intent: 'When is the issue "{{title}}" in the {{project}} project due?',
    drafts: ({ fresh }) =>
      findableIssues(fresh.gitlab).flatMap(({ p, i }) =>
        i.dueDate
          ? [
              {
                params: { title: i.title, project: p.name },
                startUrl: HOME,
                eval: stringMatch({ must_include: [mediumDate(i.dueDate)] }),
                oracle: [...openIssue(p, i, 'all'), exit(mediumDate(i.dueDate))],
              },
            ]
          : [],
      ),
  },
  {
    id: 404,
    site: 'gitlab',
    intent: 'What is the source branch of the merge request "{{title}}" in the {{project}} project?',
    drafts: ({ fresh }) =>
      fresh.gitlab.projects.all().flatMap((p) => {
        const mrs = fresh.gitlab.projectMergeRequests(p.id);
        return mrs
          .filter((m) => mrs.filter((x) => x.title === m.title).length === 1)
          .map((m) => ({
            params: { title: m.title, project: p.name },
            startUrl: HOME,
            eval: stringMatch({ must_include: [m.source] }),
            oracle: [...openProject(p), click(byAttr('class', 'shortcuts-merge_requests', 'a')), click(link('All')), click(link(m.title)), exit(m.source)],
          }));
      }),
  },
  {
    id: 405,
    site: 'gitlab',
    intent: 'Show me the open issues labeled "{{label}}" in the {{project}} project',
    drafts: ({ fresh }) =>
      fresh.gitlab.projects.all().flatMap((p) =>
        p.labels.map((l) => ({
          params: { label: l.name, project: p.name },
          startUrl: HOME,
          eval: urlMatch(`${HOME}/${projectPath(p)}/-/issues?${new URLSearchParams({ label_name: l.name }).toString()}`),
          oracle: [...openProject(p), click(link('Labels')), click(link(l.name)), exit(DONE)],
        })),
      ),
  },
  {
    id: 406,
    site: 'gitlab',
    intent: 'Open {{page}}',
    heldOut: true,
    drafts: ({ fresh }) => {
      const me = fresh.gitlab.me.username;
      const pages: [string, string, OracleStep[]][] = [
        ['my to-do list', '/dashboard/todos', [click(link('To-Do List'))]],
        ['the issues assigned to me', `/dashboard/issues?assignee_username=${me}`, [click(link('Issues'))]],
        ['the merge requests assigned to me', `/dashboard/merge_requests?assignee_username=${me}`, [click(link('Merge requests'))]],
        [
          'the merge requests that need my review',
          `/dashboard/merge_requests?reviewer_username=${me}`,
          [click(link('Merge requests')), click(link('Review requests for you'))],
        ],
        ['my starred projects', '/dashboard/projects/starred', [click(link('Projects')), click(link('Starred'))]],
      ];
      return pages.map(([page, url, steps]) => ({ params: { page }, startUrl: HOME, eval: urlMatch(`${HOME}${url}`), oracle: [...steps, exit(DONE)] }));
    },
  },
  {
    id: 407,
    site: 'gitlab',
    intent: 'Create an issue "{{title}}" in the {{project}} project, assign it to myself, label it {{label}} and set its due date to {{due}}',
    drafts: ({ fresh, rng }) =>
      fresh.gitlab.myProjects().flatMap((p) =>
        NEW_ISSUES.filter((t) => !fresh.gitlab.projectIssues(p.id).some((i) => i.title === t))
          .slice(0, 3)
          .flatMap((title) => {
            const labels = ['None', ...p.labels.map((l) => l.name)];
            const label = rng.pick(p.labels.map((l) => l.name).filter((l) => firstContaining(labels, l) === l));
            const due = new Date(Date.parse('2023-07-01') + rng.int(0, 2400) * 86_400_000).toISOString().slice(0, 10);
            const me = fresh.gitlab.me;
            return [
              {
                params: { title, project: p.name, label, due: mediumDate(due) },
                startUrl: HOME,
                eval: programHtml([
                  {
                    url: 'last',
                    locator: 'document.querySelector(\'[data-qa-selector="title_content"]\').outerText',
                    required_contents: { exact_match: title },
                  },
                  {
                    url: 'last',
                    locator: 'document.querySelector(\'[data-testid="sidebar-due-date"]\').outerText',
                    required_contents: { must_include: [mediumDate(due)] },
                  },
                  { url: 'last', locator: "document.querySelector('.block.assignee').outerText", required_contents: { must_include: [me.name] } },
                  { url: 'last', locator: "document.querySelector('.block.labels').outerText", required_contents: { must_include: [label] } },
                ]),
                oracle: [
                  ...openProject(p),
                  click(byAttr('class', 'shortcuts-issues', 'a')),
                  click(link('New issue')),
                  type(byId('issue_title'), title),
                  select(byId('issue_assignee_id'), me.name),
                  select(byId('issue_label'), label),
                  type(byId('issue_due_date'), due),
                  click(button('Create issue')),
                  exit(DONE),
                ],
              },
            ];
          }),
      ),
  },
  {
    id: 408,
    site: 'gitlab',
    intent: 'Comment "{{note}}" on the issue "{{title}}" in the {{project}} project',
    drafts: ({ fresh }) =>
      findableIssues(fresh.gitlab).map(({ p, i }, k) => {
        const note = cycle(NOTES, k);
        return {
          params: { note, title: i.title, project: p.name },
          startUrl: HOME,
          eval: programHtml([
            {
              url: issueUrl(p, i),
              locator: "document.querySelector('[id=\"notes-list\"]').lastElementChild.querySelector('.timeline-discussion-body').outerText",
              required_contents: { exact_match: note },
            },
          ]),
          oracle: [...openIssue(p, i, 'all'), type(byId('note-body'), note), click(button('Comment')), exit(DONE)],
        };
      }),
  },
  {
    id: 409,
    site: 'gitlab',
    intent: 'Close the issue "{{title}}" in the {{project}} project',
    drafts: ({ fresh }) =>
      findableIssues(fresh.gitlab, true).map(({ p, i }) => ({
        params: { title: i.title, project: p.name },
        startUrl: HOME,
        eval: programHtml([
          {
            url: issueUrl(p, i),
            locator: 'document.querySelector(\'[data-testid="issue-state-badge"]\').outerText',
            required_contents: { exact_match: 'Closed' },
          },
        ]),
        oracle: [...openIssue(p, i, 'opened'), click(button('Close issue')), exit(DONE)],
      })),
  },
  {
    id: 410,
    site: 'gitlab',
    intent: 'Invite {{user}} to the {{project}} project as {{role}}',
    drafts: ({ fresh, rng }) =>
      fresh.gitlab.projects.all().flatMap((p) =>
        fresh.gitlab.base.seed.users
          .filter((u) => !p.members.some((m) => m.username === u.username))
          .slice(0, 3)
          .map((u) => {
            const role = rng.pick(['Guest', 'Reporter', 'Developer', 'Maintainer'] as const);
            return {
              params: { user: u.name, project: p.name, role },
              startUrl: HOME,
              eval: programHtml([
                {
                  url: `${HOME}/${projectPath(p)}/-/project_members`,
                  locator: `func:gitlab_get_project_memeber_role(__page__, '${u.username}')`,
                  required_contents: { must_include: [role] },
                },
              ]),
              oracle: [
                ...openProject(p),
                click(link('Members')),
                type(byId('invite_member_username'), u.name),
                select(byId('invite_member_access_level'), role),
                click(button('Invite')),
                exit(DONE),
              ],
            };
          }),
      ),
  },
  {
    id: 411,
    site: 'gitlab',
    intent: 'Create a new {{visibility}} project named "{{name}}"',
    drafts: ({ fresh }) =>
      NEW_PROJECTS.flatMap((name) =>
        (['Public', 'Private'] as const).map((visibility) => {
          const path = projectPathFromName(name);
          if (fresh.gitlab.projectAt(fresh.gitlab.me.username, path)) throw new Error(`project ${path} already exists`);
          return {
            params: { visibility: visibility.toLowerCase(), name },
            startUrl: HOME,
            eval: programHtml([
              {
                url: `${HOME}/${fresh.gitlab.me.username}/${path}`,
                locator: "document.querySelector('.visibility-icon').getAttribute('title')",
                required_contents: { must_include: [visibility] },
              },
            ]),
            oracle: [
              click(link('New project')),
              type(byId('project_name'), name),
              click(byId(visibility === 'Public' ? 'project_visibility_level_20' : 'project_visibility_level_0')),
              click(button('Create project')),
              exit(DONE),
            ],
          };
        }),
      ),
  },
  {
    id: 412,
    site: 'gitlab',
    intent: 'Star the {{project}} project',
    heldOut: true,
    drafts: ({ fresh }) =>
      fresh.gitlab.projects
        .filter((p) => !fresh.gitlab.starred.has(p.id))
        .map((p) => ({
          params: { project: p.name },
          startUrl: HOME,
          eval: programHtml([
            { url: `${HOME}/users/${fresh.gitlab.me.username}/starred`, locator: '', required_contents: { must_include: [`${p.namespace} / ${p.name}`] } },
          ]),
          oracle: [...openProject(p), click(button('Star')), exit(DONE)],
        })),
  },
  {
    id: 413,
    site: 'gitlab',
    intent: 'Set my GitLab status to "{{status}}"',
    heldOut: true,
    drafts: ({ fresh }) =>
      STATUSES.map((status) => ({
        params: { status },
        startUrl: HOME,
        eval: programHtml([
          {
            url: `${HOME}/${fresh.gitlab.me.username}`,
            locator: "document.querySelector('.cover-status').lastChild.textContent",
            required_contents: { exact_match: status },
          },
        ]),
        oracle: [click(link('Edit profile')), type(byId('user_status_message'), status), click(button('Update profile settings')), exit(DONE)],
      })),
  },
  {
    id: 414,
    site: 'gitlab',
    intent: 'Create the label "{{label}}" in the {{project}} project',
    drafts: ({ fresh }) =>
      fresh.gitlab.projects.all().flatMap((p, k) =>
        [0, 1].map((j) => {
          const label = cycle(NEW_LABELS, k + j * 3);
          return {
            params: { label, project: p.name },
            startUrl: HOME,
            eval: programHtml([
              {
                url: `${HOME}/${projectPath(p)}/-/labels`,
                locator: "[...document.querySelectorAll('.labels-list .gl-label-text')].map(e => e.textContent).join(', ')",
                required_contents: { must_include: [label] },
              },
            ]),
            oracle: [...openProject(p), click(link('Labels')), type(byId('label_title'), label), click(button('Create label')), exit(DONE)],
          };
        }),
      ),
  },
  {
    id: 415,
    site: 'gitlab',
    intent: 'Assign the issue "{{title}}" in the {{project}} project to myself',
    heldOut: true,
    drafts: ({ fresh }) => {
      const me = fresh.gitlab.me.username;
      const mine = fresh.gitlab.issues.filter((i) => i.state === 'opened' && i.assignees.includes(me)).map((i) => i.title.toLowerCase());
      return findableIssues(fresh.gitlab, true)
        .filter(({ i }) => !mine.some((t) => t.includes(i.title.toLowerCase())))
        .map(({ p, i }) => ({
          params: { title: i.title, project: p.name },
          startUrl: HOME,
          eval: programHtml([
            {
              url: `${HOME}/dashboard/issues?scope=all&state=opened&assignee_username=${me}`,
              locator: "[...document.querySelectorAll('.issue-title-text')].map(e => e.textContent).join(' | ')",
              required_contents: { must_include: [i.title] },
            },
          ]),
          oracle: [...openIssue(p, i, 'opened'), click(button('assign yourself')), exit(DONE)],
        }));
    },
  },
  {
    id: 416,
    site: 'gitlab',
    intent: 'How many stars does the {{project}} project have?',
    drafts: ({ fresh }) =>
      fresh.gitlab.projects.all().map((p) => ({
        params: { project: p.name },
        startUrl: HOME,
        eval: stringMatch({ must_include: [String(fresh.gitlab.stars(p))] }),
        oracle: [search(byId('search'), p.name), exit(String(fresh.gitlab.stars(p)))],
      })),
  },
  {
    id: 417,
    site: 'gitlab',
    intent: 'How many open issues labeled "{{label}}" does the {{project}} project have?',
    composes: [401, 405],
    // The label's issue list opens on the Open tab, whose badge counts the labeled open issues. Only
    // labels where that count differs from both the project's open issues and the label's issues of
    // any state, so an answer that drops either constraint is wrong.
    drafts: ({ fresh }) =>
      fresh.gitlab.projects.all().flatMap((p) => {
        const issues = fresh.gitlab.projectIssues(p.id);
        const open = fresh.gitlab.filterIssues(issues, { state: 'opened' }).length;
        return p.labels.flatMap((l) => {
          const labeled = fresh.gitlab.filterIssues(issues, { state: 'all', label: l.name }).length;
          const n = fresh.gitlab.filterIssues(issues, { state: 'opened', label: l.name }).length;
          if (n === open || n === labeled) return [];
          return [
            {
              params: { label: l.name, project: p.name },
              startUrl: HOME,
              eval: stringMatch({ must_include: [String(n)] }),
              oracle: [...openProject(p), click(link('Labels')), click(link(l.name)), exit(String(n))],
            },
          ];
        });
      }),
  },
];
