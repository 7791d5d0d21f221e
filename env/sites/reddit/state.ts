/** One episode's forum: copy-on-write tables and the listing queries pages and templates share. */
import { CowTable, indexBy, nextIdAfter } from '../../state/cowTable';
import { SiteClock } from '../common';
import type { Comment, Forum, RedditSeed, Submission } from './data';

export interface RedditBase {
  seed: RedditSeed;
  forums: ReadonlyMap<string, Forum>;
  submissions: ReadonlyMap<number, Submission>;
  comments: ReadonlyMap<number, Comment>;
}

export function redditBase(seed: RedditSeed): RedditBase {
  return {
    seed,
    forums: indexBy(seed.forums, (f) => f.name.toLowerCase()),
    submissions: indexBy(seed.submissions, (s) => s.id),
    comments: indexBy(seed.comments, (c) => c.id),
  };
}

export type SortMode = 'hot' | 'new' | 'top';

export class RedditState {
  readonly forums: CowTable<string, Forum>;
  readonly submissions: CowTable<number, Submission>;
  readonly comments: CowTable<number, Comment>;
  /** The signed-in user's votes: submission id -> +1 / -1. */
  readonly votes = new CowTable<number, number>(new Map());
  readonly subscriptions: CowTable<string, string>;
  readonly bios: CowTable<string, string>;
  readonly clock: SiteClock;
  flash: string | null = null;

  constructor(readonly base: RedditBase) {
    this.forums = new CowTable(base.forums);
    const last = base.seed.submissions[base.seed.submissions.length - 1];
    this.submissions = new CowTable(base.submissions, (last?.id ?? 1000) + 7);
    this.comments = new CowTable(base.comments, nextIdAfter(base.seed.comments));
    this.subscriptions = new CowTable(new Map(base.seed.subscriptions.map((f) => [f.toLowerCase(), f])));
    this.bios = new CowTable(new Map(Object.entries(base.seed.bios)));
    this.clock = new SiteClock(base.seed.now);
  }

  get me(): string {
    return this.base.seed.me;
  }

  forum(name: string): Forum | undefined {
    return this.forums.get(name.toLowerCase());
  }

  /** Score as shown: others' net votes plus the signed-in user's vote. */
  score(s: Submission): number {
    return s.score + (this.votes.get(s.id) ?? 0);
  }

  commentCount(submissionId: number): number {
    return this.comments.filter((c) => c.submissionId === submissionId).length;
  }

  /** Listing order: new = newest first; top = highest score first; hot = score decayed by age. */
  sorted(list: Submission[], mode: SortMode): Submission[] {
    const now = Date.parse(this.base.seed.now);
    const hot = (s: Submission) => this.score(s) / Math.pow((now - Date.parse(s.created)) / 3_600_000 + 2, 0.8);
    const byNew = (a: Submission, b: Submission) => b.created.localeCompare(a.created) || b.id - a.id;
    if (mode === 'new') return [...list].sort(byNew);
    if (mode === 'top') return [...list].sort((a, b) => this.score(b) - this.score(a) || byNew(a, b));
    return [...list].sort((a, b) => hot(b) - hot(a) || byNew(a, b));
  }

  inForum(forum: string, mode: SortMode): Submission[] {
    const key = forum.toLowerCase();
    return this.sorted(
      this.submissions.filter((s) => s.forum.toLowerCase() === key),
      mode,
    );
  }

  byUser(user: string): Submission[] {
    return this.sorted(
      this.submissions.filter((s) => s.author === user),
      'new',
    );
  }

  search(query: string): Submission[] {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    return this.sorted(
      this.submissions.filter((s) => words.length > 0 && words.every((w) => s.title.toLowerCase().includes(w))),
      'new',
    );
  }

  /** Comments of a submission as a flattened tree (parents before children), best first. */
  thread(submissionId: number): { comment: Comment; level: number }[] {
    const all = this.comments.filter((c) => c.submissionId === submissionId);
    const out: { comment: Comment; level: number }[] = [];
    const walk = (parentId: number | null, level: number) => {
      for (const c of all.filter((x) => x.parentId === parentId).sort((a, b) => b.score - a.score || a.id - b.id)) {
        out.push({ comment: c, level });
        walk(c.id, level + 1);
      }
    };
    walk(null, 0);
    return out;
  }

  isSubscribed(forum: string): boolean {
    return this.subscriptions.has(forum.toLowerCase());
  }

  takeFlash(): string | null {
    const message = this.flash;
    this.flash = null;
    return message;
  }
}
