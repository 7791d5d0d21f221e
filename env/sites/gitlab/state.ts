/** One episode's forge: copy-on-write tables and the queries pages and task templates share. */
import { CowTable, indexBy, nextIdAfter } from '../../state/cowTable';
import { SiteClock } from '../common';
import type { GitlabSeed, Issue, MergeRequest, Project, User } from './data';

export interface GitlabBase {
  seed: GitlabSeed;
  projects: ReadonlyMap<number, Project>;
  issues: ReadonlyMap<number, Issue>;
  mergeRequests: ReadonlyMap<number, MergeRequest>;
  users: ReadonlyMap<string, User>;
}

export function gitlabBase(seed: GitlabSeed): GitlabBase {
  return {
    seed,
    projects: indexBy(seed.projects, (p) => p.id),
    issues: indexBy(seed.issues, (i) => i.id),
    mergeRequests: indexBy(seed.mergeRequests, (m) => m.id),
    users: indexBy(seed.users, (u) => u.username),
  };
}

export type IssueFilter = { state?: string; label?: string; search?: string; assignee?: string; author?: string };

export class GitlabState {
  readonly projects: CowTable<number, Project>;
  readonly issues: CowTable<number, Issue>;
  readonly mergeRequests: CowTable<number, MergeRequest>;
  readonly starred: CowTable<number, number>;
  readonly following: CowTable<string, string>;
  profile: GitlabSeed['profile'];
  readonly clock: SiteClock;
  flash: string | null = null;

  constructor(readonly base: GitlabBase) {
    this.projects = new CowTable(base.projects, nextIdAfter(base.seed.projects));
    this.issues = new CowTable(base.issues, nextIdAfter(base.seed.issues));
    this.mergeRequests = new CowTable(base.mergeRequests, nextIdAfter(base.seed.mergeRequests));
    this.starred = new CowTable(new Map(base.seed.starred.map((id) => [id, id])));
    this.following = new CowTable(new Map(base.seed.following.map((u) => [u, u])));
    this.profile = base.seed.profile;
    this.clock = new SiteClock(base.seed.now);
  }

  get me(): User {
    return this.base.users.get(this.base.seed.me) as User;
  }

  user(username: string): User | undefined {
    return this.base.users.get(username);
  }

  /** A user by username or by full name, case-insensitively. */
  findUser(text: string): User | undefined {
    const t = text.trim().replace(/^@/, '').toLowerCase();
    return this.base.seed.users.find((u) => u.username.toLowerCase() === t || u.name.toLowerCase() === t);
  }

  projectAt(namespace: string, path: string): Project | undefined {
    return this.projects.find((p) => p.namespace.toLowerCase() === namespace.toLowerCase() && p.path.toLowerCase() === path.toLowerCase());
  }

  /** Stars as shown: the seed count plus the signed-in user's star. */
  stars(p: Project): number {
    return (
      p.stars +
      (this.starred.has(p.id) && !this.base.seed.starred.includes(p.id) ? 1 : 0) -
      (!this.starred.has(p.id) && this.base.seed.starred.includes(p.id) ? 1 : 0)
    );
  }

  myProjects(): Project[] {
    return this.projects.filter((p) => p.members.some((m) => m.username === this.base.seed.me));
  }

  searchProjects(query: string): Project[] {
    const q = query.trim().toLowerCase();
    return this.projects.filter((p) => q !== '' && `${p.namespace}/${p.name} ${p.description}`.toLowerCase().includes(q));
  }

  projectIssues(projectId: number): Issue[] {
    return this.issues.filter((i) => i.projectId === projectId);
  }

  /** Issues matching a filter, newest first (GitLab's default "created date" order). */
  filterIssues(issues: Issue[], f: IssueFilter): Issue[] {
    const words = (f.search ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    return issues
      .filter(
        (i) =>
          (!f.state || f.state === 'all' || i.state === f.state) &&
          (!f.label || i.labels.includes(f.label)) &&
          (!f.assignee || i.assignees.includes(f.assignee)) &&
          (!f.author || i.author === f.author) &&
          words.every((w) => i.title.toLowerCase().includes(w)),
      )
      .sort((a, b) => b.created.localeCompare(a.created) || b.id - a.id);
  }

  projectMergeRequests(projectId: number): MergeRequest[] {
    return this.mergeRequests.filter((m) => m.projectId === projectId).sort((a, b) => b.created.localeCompare(a.created));
  }

  takeFlash(): string | null {
    const message = this.flash;
    this.flash = null;
    return message;
  }
}
