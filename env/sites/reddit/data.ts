/**
 * The forum's seed (modelled on WebArena's Postmill "reddit"): forums with descriptions and sidebars,
 * users, a few hundred submissions with comment threads and scores, and the signed-in user
 * (as in WebArena, MarvelsGrantMan136) with own posts and subscriptions.
 */
import { slugify } from '../../html';
import type { Rng } from '../../random';

export interface Forum {
  name: string;
  title: string;
  description: string;
  sidebar: string;
  subscribers: number;
  createdBy: string;
}

export interface Submission {
  id: number;
  forum: string;
  author: string;
  title: string;
  slug: string;
  body: string;
  url: string | null;
  /** ISO date-time. */
  created: string;
  /** Net score from everyone but the signed-in user. */
  score: number;
}

export interface Comment {
  id: number;
  submissionId: number;
  parentId: number | null;
  author: string;
  body: string;
  created: string;
  score: number;
}

export interface RedditSeed {
  me: string;
  users: string[];
  forums: Forum[];
  submissions: Submission[];
  comments: Comment[];
  subscriptions: string[];
  bios: Record<string, string>;
  now: string;
}

const FORUM_TOPICS: Record<string, [string, string[]]> = {
  books: [
    'Books',
    [
      'Project Hail Mary',
      'The Great Gatsby',
      'Dune',
      'Big Little Lies',
      'The Midnight Library',
      'Pachinko',
      'Circe',
      'The Road',
      'East of Eden',
      'Klara and the Sun',
    ],
  ],
  gaming: ['Gaming', ['Elden Ring', 'Zelda: Tears of the Kingdom', "Baldur's Gate 3", 'Hollow Knight', 'Stardew Valley', 'Hades', 'Starfield', 'Portal 2']],
  movies: [
    'Movies',
    ['Oppenheimer', 'Dune Part Two', 'Everything Everywhere All at Once', 'The Batman', 'Top Gun: Maverick', 'Past Lives', 'Barbie', 'Arrival'],
  ],
  technology: [
    'Technology',
    [
      'AI regulation',
      'the new M3 chips',
      'open-source LLMs',
      'right to repair',
      'USB-C everywhere',
      'quantum computing',
      'self-driving cars',
      'password managers',
    ],
  ],
  science: [
    'Science',
    ['the James Webb telescope', 'CRISPR trials', 'room-temperature superconductors', 'fusion ignition', 'deep sea creatures', 'the human microbiome'],
  ],
  worldnews: [
    'World News',
    ['the climate summit', 'global food prices', 'the election results', 'the trade agreement', 'the heat wave in Europe', 'the new rail link'],
  ],
  funny: ['Funny', ['my cat', 'a sign at the grocery store', "my dad's texting style", 'autocorrect', 'office printers', 'self-checkout machines']],
  pics: ['Pics', ['a costume contest', 'the sunset over the lake', "my grandmother's garden", 'an abandoned mall', 'a foggy morning', 'street art in Lisbon']],
  sports: ['Sports', ['running shoes', 'the playoff game', 'marathon training', 'the transfer window', 'pickleball', 'the new stadium']],
  music: ['Music', ['vinyl records', 'the new Radiohead album', 'learning guitar at 30', 'concert tickets', 'jazz for beginners', 'live albums']],
  food: ['Food', ['sourdough bread', 'homemade ramen', 'cast iron cooking', 'the perfect omelette', 'meal prep', 'spicy noodles']],
  travel: ['Travel', ['Japan in spring', 'a road trip through Utah', 'backpacking Vietnam', 'train travel in Europe', 'Iceland in winter', 'cheap flights']],
  DIY: ['DIY', ['a dryer vent mess', 'glued plastic parts', 'basement soffit framing', 'a water heater pilot light', 'a squeaky door', 'tiling a backsplash']],
  gadgets: ['Gadgets', ['a custom gaming PC', 'e-ink tablets', 'smart rings', 'mechanical keyboards', 'portable projectors', 'noise cancelling earbuds']],
  EarthPorn: ['Earth Porn', ["Henry's Fork of the Snake", 'the Dolomites', 'Zion at dawn', 'the Scottish Highlands', 'Patagonia', 'the Faroe Islands']],
  UpliftingNews: [
    'Uplifting News',
    ['a community fridge', 'a rescued sea turtle', 'free school lunches', 'a library for kids', 'a record blood drive', "a neighbor's kindness"],
  ],
  television: ['Television', ['Star Trek Starfleet Academy', 'Severance', 'The Bear', 'Succession', 'The Last of Us', 'Andor']],
  MachineLearning: [
    'Machine Learning',
    ['transformers', 'reinforcement learning from feedback', 'diffusion models', 'benchmark leakage', 'LoRA fine-tuning', 'web agents'],
  ],
  nyc: ['New York City', ['the subway', 'owning a car in NYC', 'rent prices', 'bagels in Brooklyn', 'Central Park', 'the ferry']],
  consoles: ['Consoles', ['the PS5 Pro', 'the Switch 2', 'Xbox Series S', 'retro consoles', 'console vs PC', 'Steam Deck']],
  iphone: ['iPhone', ['iPhone 14', 'iOS 17', 'battery health', 'the action button', 'MagSafe chargers', 'iPhone cases']],
  personalfinance: [
    'Personal Finance',
    ['an emergency fund', 'index funds', 'paying off student loans', 'a first budget', 'credit scores', 'retirement accounts'],
  ],
  history: ['History', ['the Roman roads', 'the printing press', 'the Silk Road', 'medieval castles', 'the Apollo program', 'ancient Egypt']],
  space: ['Space', ['Artemis II', 'Starship', 'exoplanets', 'the ISS', 'Mars sample return', 'the solar eclipse']],
};

const TITLE_PATTERNS = [
  'What do you think about {x}?',
  'I finally tried {x} and here is what happened',
  'Unpopular opinion: {x} is overrated',
  'Can someone explain {x} to me?',
  'My experience with {x} after one year',
  'Is {x} worth it in 2023?',
  'Thoughts on {x}',
  'A question about {x}',
  'PSA about {x}',
  'Just a quick appreciation post for {x}',
  'Need advice on {x}',
  'The best thing about {x}',
];

const BODY_SENTENCES = [
  'I have been thinking about this for a while.',
  'Curious to hear what everyone else thinks.',
  'Let me know in the comments.',
  'Sorry if this has been asked before.',
  'Edit: thanks for all the replies!',
  'Long time lurker, first time poster.',
  'Any recommendations are welcome.',
  'This changed how I see things.',
];
const COMMENT_TEXTS = [
  'Totally agree with this.',
  'I had the exact same experience.',
  'Source?',
  'This is the way.',
  'Underrated comment.',
  'Came here to say this.',
  'Not sure I agree, but good point.',
  'Thanks for sharing!',
  'This made my day.',
  'Can confirm.',
  'Interesting take.',
  'How long did it take you?',
  'Same here, honestly.',
  'Great write-up.',
  'I disagree completely.',
];
const NAME_PARTS_A = [
  'Cameron',
  'Adam',
  'Pixel',
  'Quiet',
  'Rusty',
  'Lunar',
  'Happy',
  'Urban',
  'Salty',
  'Cosmic',
  'Golden',
  'Midnight',
  'Bright',
  'Lazy',
  'Wild',
  'Silent',
  'Clever',
  'Frosty',
];
const NAME_PARTS_B = [
  'Kelsey',
  'Cannon',
  'Panda',
  'Reader',
  'Falcon',
  'Otter',
  'Nomad',
  'Walrus',
  'Badger',
  'Pilot',
  'Maple',
  'Fox',
  'Heron',
  'Sloth',
  'Tiger',
  'Wombat',
  'Sparrow',
  'Lynx',
];

export function generateRedditSeed(rng: Rng): RedditSeed {
  const me = 'MarvelsGrantMan136';
  const userRng = rng.fork('users');
  const users = new Set<string>();
  while (users.size < 60) users.add(`${userRng.pick(NAME_PARTS_A)}${userRng.pick(NAME_PARTS_B)}${userRng.chance(0.5) ? userRng.int(1, 999) : ''}`);
  const others = [...users];
  const forums: Forum[] = Object.entries(FORUM_TOPICS).map(([name, [title, topics]], i) => ({
    name,
    title,
    description: `A place to talk about ${title.toLowerCase()}: ${topics.slice(0, 3).join(', ')} and more.`,
    sidebar: `Be civil. Stay on topic. No spam. Posts about ${topics[0]} are welcome.`,
    subscribers: 500 + ((i * 7919) % 40000),
    createdBy: others[i % others.length] as string,
  }));
  const subRng = rng.fork('submissions');
  const submissions: Submission[] = [];
  const titles = new Set<string>();
  const start = Date.parse('2022-03-01T00:00:00Z');
  const span = Date.parse('2023-05-30T00:00:00Z') - start;
  for (const forum of forums) {
    const topics = FORUM_TOPICS[forum.name]?.[1] ?? [];
    const count = subRng.int(22, 34);
    let made = 0;
    while (made < count) {
      const title = subRng.pick(TITLE_PATTERNS).replace('{x}', subRng.pick(topics));
      if (titles.has(title)) {
        if (titles.size > 5000) break;
        continue;
      }
      titles.add(title);
      const isLink = subRng.chance(0.2);
      submissions.push({
        id: 0,
        forum: forum.name,
        author: subRng.chance(0.04) ? me : subRng.pick(others),
        title,
        slug: slugify(title).slice(0, 60).replace(/-+$/, ''),
        body: isLink ? '' : subRng.sample(BODY_SENTENCES, subRng.int(1, 3)).join(' '),
        url: isLink ? `https://example.com/${forum.name.toLowerCase()}/${subRng.int(1000, 9999)}.jpg` : null,
        created: new Date(start + Math.floor(subRng.next() * span)).toISOString(),
        score: subRng.weighted([
          [subRng.int(-5, 3), 3],
          [subRng.int(4, 60), 5],
          [subRng.int(61, 900), 2],
        ] as const),
      });
      made++;
    }
  }
  submissions.sort((a, b) => a.created.localeCompare(b.created));
  submissions.forEach((s, i) => (s.id = 1000 + i * 7));
  const comRng = rng.fork('comments');
  const comments: Comment[] = [];
  for (const s of submissions) {
    const top = comRng.weighted([
      [0, 2],
      [1, 3],
      [2, 3],
      [4, 3],
      [7, 2],
      [12, 1],
    ] as const);
    const ids: number[] = [];
    for (let c = 0; c < top; c++) {
      const parentId = ids.length && comRng.chance(0.35) ? comRng.pick(ids) : null;
      const id = comments.length + 1;
      ids.push(id);
      comments.push({
        id,
        submissionId: s.id,
        parentId,
        author: comRng.chance(0.03) ? me : comRng.pick(others),
        body: comRng.pick(COMMENT_TEXTS),
        created: new Date(Date.parse(s.created) + comRng.int(5, 5000) * 60_000).toISOString(),
        score: comRng.int(-3, 120),
      });
    }
  }
  return {
    me,
    users: [me, ...others],
    forums,
    submissions,
    comments,
    subscriptions: ['books', 'gaming', 'technology', 'pics', 'funny'],
    bios: {},
    now: '2023-06-01T09:00:00.000Z',
  };
}
