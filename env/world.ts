/**
 * The seeded data of all embedded sites. The same seed gives the same world, which is what lets a
 * task file generated once stay valid for servers started later.
 */
import { Rng } from './random';
import { generateCatalog } from './sites/shopping/catalog';
import { generateShoppingSeed } from './sites/shopping/data';
import { shoppingBase, ShoppingState, type ShoppingBase } from './sites/shopping/state';
import { generateAdminSeed } from './sites/shopping-admin/data';
import { adminBase, AdminState, type AdminBase } from './sites/shopping-admin/state';
import { generateRedditSeed } from './sites/reddit/data';
import { redditBase, RedditState, type RedditBase } from './sites/reddit/state';
import { generateGitlabSeed } from './sites/gitlab/data';
import { gitlabBase, GitlabState, type GitlabBase } from './sites/gitlab/state';

/** The seed of the default embedded world and task sets (WebRL's arXiv number). */
export const DEFAULT_SEED = 2411;

export interface World {
  seed: number;
  shopping: ShoppingBase;
  admin: AdminBase;
  reddit: RedditBase;
  gitlab: GitlabBase;
}

const worlds = new Map<number, World>();

/** Builds (once per process and seed) the world's seed data and shared lookup maps. */
export function buildWorld(seed = DEFAULT_SEED): World {
  const cached = worlds.get(seed);
  if (cached) return cached;
  const rng = new Rng(seed);
  const catalog = generateCatalog(rng.fork('catalog'));
  const world: World = {
    seed,
    shopping: shoppingBase(generateShoppingSeed(rng.fork('shopping'), catalog)),
    admin: adminBase(generateAdminSeed(rng.fork('admin'), catalog)),
    reddit: redditBase(generateRedditSeed(rng.fork('reddit'))),
    gitlab: gitlabBase(generateGitlabSeed(rng.fork('gitlab'))),
  };
  worlds.set(seed, world);
  return world;
}

/** Fresh (seed-state) views of every site, for task templates to compute reference answers. */
export function freshStates(world: World): { shopping: ShoppingState; admin: AdminState; reddit: RedditState; gitlab: GitlabState } {
  return {
    shopping: new ShoppingState(world.shopping),
    admin: new AdminState(world.admin),
    reddit: new RedditState(world.reddit),
    gitlab: new GitlabState(world.gitlab),
  };
}
