/**
 * Per-episode states of one site, keyed by the episode id the browser carries in a cookie. A request
 * without the cookie sees the shared "public" state (a person browsing `webrl env serve`); a request
 * with an id the site does not know is refused, so a disposed episode cannot silently restart.
 */
export const EPISODE_COOKIE = 'webrl_episode';

/** Upper bound on live episodes, so an environment that never disposes cannot exhaust memory. */
const MAX_LIVE_EPISODES = 4096;

export class EpisodeStore<S> {
  private readonly live = new Map<string, S>();
  readonly publicState: S;

  constructor(private readonly fresh: () => S) {
    this.publicState = fresh();
  }

  create(id: string): void {
    this.live.delete(id);
    this.live.set(id, this.fresh());
    if (this.live.size > MAX_LIVE_EPISODES) {
      const oldest = this.live.keys().next().value;
      if (oldest !== undefined) this.live.delete(oldest);
    }
  }

  get(id: string): S | undefined {
    return this.live.get(id);
  }

  drop(id: string): boolean {
    return this.live.delete(id);
  }

  get size(): number {
    return this.live.size;
  }
}

export function episodeIdFromCookie(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === EPISODE_COOKIE) return decodeURIComponent(rest.join('='));
  }
  return undefined;
}
