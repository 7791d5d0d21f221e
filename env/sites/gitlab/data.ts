/**
 * The code forge's seed (modelled on WebArena's GitLab): users, projects of users and groups with
 * members and labels, issues and merge requests with discussions, and the signed-in user (as in
 * WebArena, byteblaze "Byte Blaze") with own projects, stars and to-dos.
 */
import type { Rng } from '../../random';

export type Role = 'Guest' | 'Reporter' | 'Developer' | 'Maintainer' | 'Owner';
export const ROLES: Role[] = ['Guest', 'Reporter', 'Developer', 'Maintainer', 'Owner'];

export interface User {
  username: string;
  name: string;
}

export interface Label {
  name: string;
  color: string;
  description: string;
}

export interface Project {
  id: number;
  namespace: string;
  name: string;
  path: string;
  description: string;
  visibility: 'Public' | 'Private' | 'Internal';
  stars: number;
  created: string;
  members: { username: string; role: Role }[];
  labels: Label[];
  branches: string[];
  template: string | null;
}

export interface Note {
  author: string;
  body: string;
  date: string;
}

export interface Issue {
  id: number;
  projectId: number;
  iid: number;
  title: string;
  description: string;
  author: string;
  assignees: string[];
  labels: string[];
  state: 'opened' | 'closed';
  created: string;
  updated: string;
  dueDate: string | null;
  notes: Note[];
}

export interface MergeRequest {
  id: number;
  projectId: number;
  iid: number;
  title: string;
  source: string;
  target: string;
  author: string;
  assignees: string[];
  reviewers: string[];
  state: 'opened' | 'merged' | 'closed';
  created: string;
  notes: Note[];
}

export interface GitlabSeed {
  me: string;
  users: User[];
  projects: Project[];
  issues: Issue[];
  mergeRequests: MergeRequest[];
  starred: number[];
  following: string[];
  profile: { status: string; website: string; bio: string };
  now: string;
}

const PEOPLE: [string, string][] = [
  ['vinta', 'Vinta Chen'],
  ['lahwaacz', 'Jakub Klinkovský'],
  ['koush', 'Koushik Dutta'],
  ['primer', 'Primer Bot'],
  ['convexegg', 'Convex Egg'],
  ['abisubramanya27', 'Abishek S'],
  ['bblanchon', 'Benoît Blanchon'],
  ['roshanjossey', 'Roshan Jossy'],
  ['davepgreene', 'Dave Greene'],
  ['yjlou', 'Yi-Jun Lou'],
  ['eriklindernoren', 'Erik Linder-Norén'],
  ['kkroening', 'Karl Kroening'],
  ['sarahchen', 'Sarah Chen'],
  ['mgarcia', 'Maria Garcia'],
  ['tkim', 'Tae Kim'],
  ['jdoe', 'Jane Doe'],
  ['alexw', 'Alex Wong'],
  ['pnguyen', 'Phuong Nguyen'],
  ['rpatel', 'Ravi Patel'],
  ['lmartin', 'Lucas Martin'],
  ['ewilson', 'Emily Wilson'],
  ['hbrown', 'Henry Brown'],
  ['otaylor', 'Olivia Taylor'],
  ['nlopez', 'Noah Lopez'],
  ['achu', 'Amy Chu'],
  ['blo', 'Ben Lo'],
  ['cmiller', 'Chris Miller'],
  ['dsmith', 'Diana Smith'],
  ['fjones', 'Frank Jones'],
  ['gclark', 'Grace Clark'],
];

const PROJECT_SPECS: [string, string, string][] = [
  ['byteblaze', 'a11y-webring.club', 'A webring for digital accessibility practitioners.'],
  ['byteblaze', 'dotfiles', 'My shell, editor and git configuration.'],
  ['byteblaze', 'gimmiethat.space', 'A tiny site that lists free stuff for makers.'],
  ['byteblaze', 'empathy-prompts', 'Prompts to build empathy in design reviews.'],
  ['byteblaze', 'accessible-html-content-patterns', 'The full set of HTML elements, with notes on accessibility.'],
  ['byteblaze', 'cloud-to-butt', 'Browser extension that replaces "the cloud" with "my butt".'],
  ['byteblaze', 'timeline-tools', 'Scripts to tidy up GitHub issue timelines.'],
  ['byteblaze', 'solarized-prism-theme', 'A Solarized theme for the Prism syntax highlighter.'],
  ['a11yproject', 'a11yproject.com', 'The A11Y Project is a community-driven effort to make digital accessibility easier.'],
  ['kkroening', 'ffmpeg-python', 'Python bindings for FFmpeg with complex filtering support.'],
  ['eriklindernoren', 'PyTorch-GAN', 'PyTorch implementations of Generative Adversarial Networks.'],
  ['vinta', 'awesome-python', 'A curated list of awesome Python frameworks, libraries and software.'],
  ['koush', 'AndroidAsync', 'Asynchronous socket, http, websocket and socket.io library for Android.'],
  ['primer', 'design', 'Primer design guidelines, principles and patterns.'],
  ['convexegg', 'chatgpt', 'A command line client for ChatGPT.'],
  ['auth0', 'angular-storage', 'A storage library for AngularJS done right.'],
  ['keycloak', 'keycloak', 'Open source identity and access management.'],
  ['thoughtbot', 'administrate', 'A Rails engine that helps you put together a super-flexible admin dashboard.'],
  ['facebook', 'create-react-app', 'Set up a modern web app by running one command.'],
  ['umano', 'AndroidSlidingUpPanel', 'An Android sliding up panel layout.'],
  ['mk-j', 'PHP_XLSXWriter', 'A PHP library to write XLSX files.'],
  ['bblanchon', 'ArduinoJson', 'JSON library for Arduino and embedded C++.'],
  ['lahwaacz', 'arch-wiki-docs', 'Scripts to download the ArchWiki pages for offline use.'],
  ['yjlou', 'leetcode-notes', 'Notes and solutions for algorithm practice.'],
  ['sarahchen', 'recipe-box', 'A self-hosted recipe manager.'],
  ['mgarcia', 'budget-tracker', 'Track expenses and budgets from the terminal.'],
  ['tkim', 'weather-cli', 'Weather forecasts in your terminal.'],
  ['alexw', 'markdown-slides', 'Turn Markdown files into slide decks.'],
  ['rpatel', 'kanban-lite', 'A minimal kanban board.'],
  ['ewilson', 'photo-sorter', 'Sort photos into folders by date taken.'],
];

const LABEL_POOL: Label[] = [
  { name: 'bug', color: '#d9534f', description: 'Something is not working' },
  { name: 'enhancement', color: '#5cb85c', description: 'New feature or request' },
  { name: 'documentation', color: '#428bca', description: 'Improvements or additions to documentation' },
  { name: 'question', color: '#d1d100', description: 'Further information is requested' },
  { name: 'help wanted', color: '#34495e', description: 'Extra attention is needed' },
  { name: 'good first issue', color: '#7057ff', description: 'Good for newcomers' },
  { name: 'design', color: '#ff69b4', description: 'Visual or interaction design' },
  { name: 'performance', color: '#f0ad4e', description: 'Speed and resource use' },
  { name: 'accessibility', color: '#009966', description: 'Accessibility concerns' },
  { name: 'security', color: '#8b0000', description: 'Security related' },
];

const ISSUE_SUBJECTS = [
  '404 for many URLs',
  'dark mode',
  'the color utility',
  'keyboard navigation',
  'the build script',
  'screen reader labels',
  'the search page',
  'broken links',
  'the README',
  'slow startup',
  'the login form',
  'mobile layout',
  'the release process',
  'unit tests',
  'the API docs',
  'error messages',
  'focus outlines',
  'the footer',
  'image alt text',
  'the settings page',
  'CI timeouts',
  'memory usage',
  'the changelog',
  'heading order',
  'contrast ratios',
];
const ISSUE_PATTERNS = [
  'Fix {x}',
  'Improve {x}',
  'Add tests for {x}',
  'Document {x}',
  'Refactor {x}',
  '{x} is broken on Safari',
  'Better {x}',
  'Remove {x}',
  'Update {x}',
  'Investigate {x}',
];
const BRANCH_TOPICS = [
  'dark-mode',
  'redesign',
  'fix-links',
  'update-deps',
  'a11y-audit',
  'search',
  'ci-cache',
  'docs-typos',
  'verification-functions',
  'color-utility',
  'new-footer',
  'i18n',
];

function iso(rng: Rng, from: string, to: string): string {
  const start = Date.parse(from);
  return new Date(start + Math.floor(rng.next() * (Date.parse(to) - start))).toISOString();
}

export function generateGitlabSeed(rng: Rng): GitlabSeed {
  const me = 'byteblaze';
  const users: User[] = [{ username: me, name: 'Byte Blaze' }, ...PEOPLE.map(([username, name]) => ({ username, name }))];
  const prng = rng.fork('projects');
  const projects: Project[] = PROJECT_SPECS.map(([namespace, name, description], i) => {
    const others = prng.sample(
      PEOPLE.map(([u]) => u).filter((u) => u !== namespace),
      prng.int(2, 6),
    );
    const members: Project['members'] = [{ username: namespace === me || !users.some((u) => u.username === namespace) ? me : namespace, role: 'Owner' }];
    if (namespace !== me) members.push({ username: me, role: prng.pick(['Developer', 'Maintainer', 'Reporter'] as const) });
    for (const u of others)
      if (!members.some((m) => m.username === u))
        members.push({ username: u, role: prng.pick(['Guest', 'Reporter', 'Developer', 'Developer', 'Maintainer'] as const) });
    return {
      id: i + 1,
      namespace,
      name,
      path: name,
      description,
      visibility: prng.chance(0.85) ? 'Public' : 'Private',
      stars: prng.weighted([
        [prng.int(0, 30), 4],
        [prng.int(31, 900), 4],
        [prng.int(901, 40000), 2],
      ] as const),
      created: iso(prng, '2018-01-01', '2022-06-01'),
      members,
      labels: prng.sample(LABEL_POOL, prng.int(4, 8)).sort((a, b) => a.name.localeCompare(b.name)),
      branches: ['main', ...prng.sample(BRANCH_TOPICS, 4)],
      template: null,
    };
  });
  const irng = rng.fork('issues');
  const issues: Issue[] = [];
  const mergeRequests: MergeRequest[] = [];
  for (const project of projects) {
    const titles = new Set<string>();
    const count = irng.int(18, 45);
    const people = project.members.map((m) => m.username);
    for (let n = 0; n < count; n++) {
      const title = irng.pick(ISSUE_PATTERNS).replace('{x}', irng.pick(ISSUE_SUBJECTS));
      if (titles.has(title)) continue;
      titles.add(title);
      const created = iso(irng, '2022-01-01', '2023-05-20');
      const author = irng.pick(people);
      issues.push({
        id: issues.length + 1,
        projectId: project.id,
        iid: issues.filter((i) => i.projectId === project.id).length + 1,
        title,
        description: `${title}. Steps to reproduce and details are below; see the discussion for context.`,
        author,
        assignees: irng.chance(0.55) ? [irng.pick(people)] : [],
        labels: irng
          .sample(project.labels, irng.int(0, 2))
          .map((l) => l.name)
          .sort(),
        state: irng.chance(0.65) ? 'opened' : 'closed',
        created,
        updated: new Date(Date.parse(created) + irng.int(0, 90) * 86_400_000).toISOString(),
        dueDate: irng.chance(0.3) ? iso(irng, '2023-06-01', '2024-06-01').slice(0, 10) : null,
        notes: Array.from({ length: irng.int(0, 3) }, (_, k) => ({
          author: irng.pick(people),
          body: irng.pick(['I can reproduce this.', 'Working on a fix.', 'Any update on this?', 'Closing as duplicate?', 'Thanks for the report!']),
          date: new Date(Date.parse(created) + (k + 1) * 3_600_000).toISOString(),
        })),
      });
    }
    const mrCount = irng.int(3, 10);
    for (let n = 0; n < mrCount; n++) {
      const source = `${irng.pick(['feature', 'fix', 'chore'])}/${irng.pick(BRANCH_TOPICS)}-${irng.int(1, 99)}`;
      const topic = source.split('/')[1]?.replace(/-\d+$/, '').replace(/-/g, ' ') ?? 'changes';
      const created = iso(irng, '2022-01-01', '2023-05-20');
      mergeRequests.push({
        id: mergeRequests.length + 1,
        projectId: project.id,
        iid: n + 1,
        title: `${irng.pick(['Add', 'Fix', 'Update', 'Improve'])} ${topic}`,
        source,
        target: 'main',
        author: irng.pick(people),
        assignees: irng.chance(0.6) ? [irng.pick(people)] : [],
        reviewers: irng.chance(0.6) ? [irng.pick(people)] : [],
        state: irng.weighted([
          ['opened', 4],
          ['merged', 5],
          ['closed', 1],
        ] as const),
        created,
        notes: [],
      });
    }
  }
  const srng = rng.fork('stars');
  return {
    me,
    users,
    projects,
    issues,
    mergeRequests,
    starred: srng.sample(projects, 4).map((p) => p.id),
    following: srng.sample(
      PEOPLE.map(([u]) => u),
      3,
    ),
    profile: { status: '', website: '', bio: 'Accessibility nerd, web developer.' },
    now: '2023-06-01T09:00:00.000Z',
  };
}

export function projectPath(p: Pick<Project, 'namespace' | 'path'>): string {
  return `${p.namespace}/${p.path}`;
}

/** GitLab's project path from a name: case, dots and underscores kept, other runs become `-`. */
export function projectPathFromName(name: string): string {
  return name
    .trim()
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^-+|-+$/g, '');
}
