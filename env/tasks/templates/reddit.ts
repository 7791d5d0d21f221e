/** Task templates on the forum (`__REDDIT__`). */
import type { OracleStep } from '../../../browser/contract';
import type { Submission } from '../../sites/reddit/data';
import type { RedditState } from '../../sites/reddit/state';
import { button, byId, click, cycle, DONE, exit, link, programHtml, search, stringMatch, type, urlMatch, type TaskTemplate } from '../template';

const HOME = '__REDDIT__';
const VOTE_LOCATOR = "document.querySelector('div.submission__vote').querySelector('form').getAttribute('class')";

function openForum(forum: string): OracleStep[] {
  return [click(link('Forums')), click(link(forum))];
}

const postUrl = (s: Submission) => `${HOME}/f/${s.forum}/${s.id}/${s.slug}`;
const forums = (s: RedditState) => s.forums.all().map((f) => f.name);
/** Titles that are unique site-wide, so an intent naming one is unambiguous. */
const uniqueTitled = (s: RedditState) => {
  const counts = new Map<string, number>();
  for (const x of s.submissions.values()) counts.set(x.title.toLowerCase(), (counts.get(x.title.toLowerCase()) ?? 0) + 1);
  return s.submissions.filter((x) => counts.get(x.title.toLowerCase()) === 1);
};

const NEW_POSTS: [string, string][] = [
  ['Is a car necessary in NYC?', 'Moving next month and wondering if I should sell my car.'],
  ['What is the recommended console to buy these days?', 'Looking for something for couch co-op with friends.'],
  ['Virtual meetup on July 8th', 'Join us online to chat about our favorite reads.'],
  ['Running shoes under $100', 'Need recommendations for daily training shoes within budget.'],
  ['What is your opinion on the iPhone 14?', 'Thinking about upgrading from an older model.'],
  ['Best beginner resources?', 'I am just getting started and would love some pointers.'],
  ['Weekly discussion thread', 'Share what you have been up to this week.'],
  ['Hidden gems you love', 'Tell me about something underrated that deserves more attention.'],
];
const COMMENTS = [
  '???',
  'Thanks, this helped a lot!',
  'I had no idea, great post.',
  'Following this thread.',
  'Could you share a source for this?',
  'Agreed, well said.',
];
const BIOS = [
  'Seeking SDE positions',
  'Coffee lover and amateur astronomer',
  'Reading 52 books this year',
  'Dog dad. Runner. Nerd.',
  'Here for the DIY threads',
  'Sci-fi fan since forever',
  'Learning to cook one recipe at a time',
  'Weekend hiker',
  'Retro gaming collector',
  'Aspiring data scientist',
  'Plant parent of 40 plants',
  'Chess enthusiast',
  'Bookworm and tea drinker',
  'Just here for the memes',
  'Travel photographer',
  'Building a tiny house',
  'Night owl developer',
  'Marathon in training',
  'History buff',
  'Vinyl collector',
];
const NEW_FORUMS: [string, string, string[]][] = [
  ['Cyberpunk', 'Welcome to the future', ['Games', 'Books', 'Movies', 'Future']],
  ['Woodworking', 'Share your builds and ask for advice', ['Tools', 'Joinery', 'Finishing']],
  ['Birding', 'Spot it, shoot it, share it', ['Photos', 'Identification', 'Gear']],
  ['Homebrewing', 'Beer, cider and mead made at home', ['Recipes', 'Equipment', 'Troubleshooting']],
  ['Bouldering', 'All things climbing without ropes', ['Gyms', 'Outdoors', 'Training']],
  ['Origami', 'The art of folding paper', ['Diagrams', 'Models', 'Paper']],
  ['Astrophotography', 'Pictures of the night sky', ['Cameras', 'Telescopes', 'Processing']],
  ['Minimalism', 'Living with less', ['Decluttering', 'Finance', 'Habits']],
  ['Beekeeping', 'Keeping bees and making honey', ['Hives', 'Seasons', 'Honey']],
  ['Calligraphy', 'Beautiful handwriting', ['Pens', 'Inks', 'Scripts']],
  ['Kayaking', 'Paddling adventures', ['Rivers', 'Sea', 'Safety']],
  ['Podcasting', 'Making and sharing podcasts', ['Audio', 'Hosting', 'Growth']],
  ['Terrariums', 'Tiny worlds in glass', ['Plants', 'Containers', 'Care']],
  ['Sourdough', 'Bread with wild yeast', ['Starters', 'Baking', 'Recipes']],
  ['Cosplay', 'Costumes and craftsmanship', ['Props', 'Sewing', 'Events']],
  ['Typography', 'Letters and type design', ['Fonts', 'Layout', 'History']],
  ['Ultralight', 'Carry less, hike more', ['Packs', 'Shelters', 'Trips']],
  ['Aquascaping', 'Planted aquarium design', ['Layouts', 'Fish', 'Lighting']],
  ['Pottery', 'Clay, wheels and kilns', ['Glazes', 'Wheel', 'Handbuilding']],
  ['Speedrunning', 'Beating games as fast as possible', ['Routes', 'Records', 'Tools']],
];
const EDIT_LINES = [
  'Every watch makes me feel like a kid again',
  'Update: solved, thanks everyone!',
  'Edit: fixed a typo in the title.',
  'Thanks for the gold, kind stranger!',
  'Update: I went with your suggestion.',
];

export const REDDIT_TEMPLATES: TaskTemplate[] = [
  {
    id: 301,
    site: 'reddit',
    intent: 'How many comments does the post "{{title}}" have?',
    drafts: ({ fresh }) =>
      uniqueTitled(fresh.reddit).map((x) => {
        const n = fresh.reddit.commentCount(x.id);
        return {
          params: { title: x.title },
          startUrl: HOME,
          eval: stringMatch({ must_include: [String(n)] }),
          oracle: [search(byId('search-q'), x.title), exit(String(n))],
        };
      }),
  },
  {
    id: 302,
    site: 'reddit',
    intent: 'Who posted the most upvoted post of all time in f/{{forum}}?',
    heldOut: true,
    drafts: ({ fresh }) =>
      forums(fresh.reddit).flatMap((forum) => {
        const [top, next] = fresh.reddit.inForum(forum, 'top');
        if (!top || (next && fresh.reddit.score(next) === fresh.reddit.score(top))) return [];
        return [
          {
            params: { forum },
            startUrl: HOME,
            eval: stringMatch({ must_include: [top.author] }),
            oracle: [...openForum(forum), click(link('Top')), exit(top.author)],
          },
        ];
      }),
  },
  {
    id: 303,
    site: 'reddit',
    intent: 'What is the title of the newest post in f/{{forum}}?',
    drafts: ({ fresh }) =>
      forums(fresh.reddit).flatMap((forum) => {
        const [newest] = fresh.reddit.inForum(forum, 'new');
        return newest
          ? [
              {
                params: { forum },
                startUrl: HOME,
                eval: stringMatch({ must_include: [newest.title] }),
                oracle: [...openForum(forum), click(link('New')), exit(newest.title)],
              },
            ]
          : [];
      }),
  },
  {
    id: 304,
    site: 'reddit',
    intent: 'Who submitted the post "{{title}}"?',
    drafts: ({ fresh }) =>
      uniqueTitled(fresh.reddit).map((x) => ({
        params: { title: x.title },
        startUrl: HOME,
        eval: stringMatch({ must_include: [x.author] }),
        oracle: [search(byId('search-q'), x.title), exit(x.author)],
      })),
  },
  {
    id: 305,
    site: 'reddit',
    intent: 'Upvote the newest post in f/{{forum}}',
    drafts: ({ fresh }) =>
      forums(fresh.reddit).flatMap((forum) => {
        const [newest] = fresh.reddit.inForum(forum, 'new');
        if (!newest) return [];
        return [
          {
            params: { forum },
            startUrl: HOME,
            eval: programHtml([{ url: postUrl(newest), locator: VOTE_LOCATOR, required_contents: { must_include: ['vote vote--user-upvoted'] } }]),
            oracle: [...openForum(forum), click(link('New')), click({ tag: 'button', attributes: { title: 'Upvote' } }), exit(DONE)],
          },
        ];
      }),
  },
  {
    id: 306,
    site: 'reddit',
    intent: 'Downvote the top post of all time in f/{{forum}}',
    drafts: ({ fresh }) =>
      forums(fresh.reddit).flatMap((forum) => {
        const [top] = fresh.reddit.inForum(forum, 'top');
        if (!top) return [];
        return [
          {
            params: { forum },
            startUrl: HOME,
            eval: programHtml([{ url: postUrl(top), locator: VOTE_LOCATOR, required_contents: { must_include: ['vote vote--user-downvoted'] } }]),
            oracle: [...openForum(forum), click(link('Top')), click({ tag: 'button', attributes: { title: 'Downvote' } }), exit(DONE)],
          },
        ];
      }),
  },
  {
    id: 307,
    site: 'reddit',
    intent: 'Post in f/{{forum}} with the title "{{title}}" and the body "{{body}}"',
    drafts: ({ fresh }) =>
      forums(fresh.reddit).flatMap((forum, i) =>
        [0, 1].map((k) => {
          const [title, body] = cycle(NEW_POSTS, i + k * 3);
          return {
            params: { forum, title, body },
            startUrl: HOME,
            eval: programHtml(
              [
                {
                  url: "func:reddit_get_post_url('__last_url__')",
                  locator: "document.querySelector('.submission__inner').outerText",
                  required_contents: { must_include: [title, body] },
                },
              ],
              `${HOME}/f/${forum}`,
            ),
            oracle: [
              ...openForum(forum),
              click(link('Submit a new post')),
              type(byId('submission_title'), title),
              type(byId('submission_body'), body),
              click(button('Create submission')),
              exit(DONE),
            ],
          };
        }),
      ),
  },
  {
    id: 308,
    site: 'reddit',
    intent: 'Reply to the post "{{title}}" with the comment "{{comment}}"',
    drafts: ({ fresh }) =>
      uniqueTitled(fresh.reddit)
        .filter((x) => x.url === null)
        .map((x, i) => {
          const comment = cycle(COMMENTS, i);
          return {
            params: { title: x.title, comment },
            startUrl: HOME,
            eval: programHtml([
              {
                url: "func:reddit_get_post_url('__last_url__')",
                locator: `[...document.querySelectorAll('.comment[data-author="${fresh.reddit.me}"] .comment__body')].map(e => e.outerText).join(' | ')`,
                required_contents: { must_include: [comment] },
              },
            ]),
            oracle: [
              search(byId('search-q'), x.title),
              click(link(x.title)),
              type(byId('reply_submission_comment'), comment),
              click(button('Post')),
              exit(DONE),
            ],
          };
        }),
  },
  {
    id: 309,
    site: 'reddit',
    intent: 'Change my biography to "{{bio}}"',
    drafts: ({ fresh }) =>
      BIOS.map((bio) => ({
        params: { bio },
        startUrl: HOME,
        eval: programHtml([
          {
            url: `${HOME}/user/${fresh.reddit.me}`,
            locator: 'document.querySelector(".user-bio__biography").outerText',
            required_contents: { exact_match: bio },
          },
        ]),
        oracle: [click(link(fresh.reddit.me)), click(link('Edit biography')), type(byId('user_biography_biography'), bio), click(button('Save')), exit(DONE)],
      })),
  },
  {
    id: 310,
    site: 'reddit',
    intent: 'Subscribe to f/{{forum}}',
    drafts: ({ fresh }) =>
      forums(fresh.reddit)
        .filter((forum) => !fresh.reddit.isSubscribed(forum))
        .map((forum) => ({
          params: { forum },
          startUrl: HOME,
          eval: programHtml([
            { url: `${HOME}/`, locator: 'document.querySelector("#sidebar > section").outerText', required_contents: { must_include: [forum] } },
          ]),
          oracle: [...openForum(forum), click(button('Subscribe')), exit(DONE)],
        })),
  },
  {
    id: 311,
    site: 'reddit',
    intent: 'Create a new forum named {{name}} with the description "{{description}}" and a sidebar listing {{topics}}',
    drafts: () =>
      NEW_FORUMS.map(([name, description, topics]) => ({
        params: { name, description, topics: topics.join(', ') },
        startUrl: HOME,
        eval: programHtml([
          { url: `${HOME}/f/${name}/edit`, locator: 'document.querySelector("#forum_description").value', required_contents: { must_include: [description] } },
          { url: `${HOME}/f/${name}/edit`, locator: 'document.querySelector("#forum_sidebar").value', required_contents: { must_include: topics } },
        ]),
        oracle: [
          click(link('Forums')),
          click(link('Create a forum')),
          type(byId('forum_name'), name),
          type(byId('forum_title'), name),
          type(byId('forum_description'), description),
          type(byId('forum_sidebar'), topics.join('\n')),
          click(button('Create forum')),
          exit(DONE),
        ],
      })),
  },
  {
    id: 312,
    site: 'reddit',
    intent: 'Edit my post "{{title}}" by adding the line "{{line}}" to its body',
    heldOut: true,
    drafts: ({ fresh }) =>
      uniqueTitled(fresh.reddit)
        .filter((x) => x.author === fresh.reddit.me && x.url === null)
        .map((x, i) => {
          const line = cycle(EDIT_LINES, i);
          return {
            params: { title: x.title, line },
            startUrl: HOME,
            eval: programHtml([
              { url: postUrl(x), locator: "document.querySelector('.submission__body').outerText", required_contents: { must_include: [line] } },
            ]),
            oracle: [
              search(byId('search-q'), x.title),
              click(link(x.title)),
              click(link('Edit')),
              type(byId('submission_body'), `${x.body}\n${line}`),
              click(button('Save')),
              exit(DONE),
            ],
          };
        }),
  },
  {
    id: 313,
    site: 'reddit',
    intent: 'Upvote every post that {{user}} submitted to f/{{forum}}',
    heldOut: true,
    drafts: ({ fresh }) => {
      const s = fresh.reddit;
      const titled = new Set(uniqueTitled(s).map((x) => x.id));
      // Each post is found by its title and upvoted from the search results.
      const out = [];
      for (const forum of forums(s)) {
        const byAuthor = new Map<string, Submission[]>();
        for (const x of s.inForum(forum, 'new')) byAuthor.set(x.author, [...(byAuthor.get(x.author) ?? []), x]);
        for (const [user, posts] of byAuthor) {
          if (user === s.me || posts.length < 2 || !posts.every((x) => titled.has(x.id))) continue;
          out.push({
            params: { user, forum },
            startUrl: HOME,
            eval: programHtml(posts.map((x) => ({ url: postUrl(x), locator: VOTE_LOCATOR, required_contents: { must_include: ['vote vote--user-upvoted'] } }))),
            oracle: [
              ...posts.flatMap((x) => [
                search(byId('search-q'), x.title),
                click({ tag: 'button', attributes: { title: 'Upvote', 'data-submission': String(x.id) } }),
              ]),
              exit(DONE),
            ],
          });
        }
      }
      return out;
    },
  },
  {
    id: 314,
    site: 'reddit',
    intent: 'Show me the {{listing}} in f/{{forum}}',
    drafts: ({ fresh }) =>
      forums(fresh.reddit).flatMap((forum) => [
        {
          params: { listing: 'newest posts', forum },
          startUrl: HOME,
          eval: urlMatch(`${HOME}/f/${forum}/new`),
          oracle: [...openForum(forum), click(link('New')), exit(DONE)],
        },
        {
          params: { listing: 'top posts of all time', forum },
          startUrl: HOME,
          eval: urlMatch(`${HOME}/f/${forum}/top?t=all`),
          oracle: [...openForum(forum), click(link('Top')), exit(DONE)],
        },
      ]),
  },
  {
    id: 315,
    site: 'reddit',
    intent: 'Upvote the newest post and downvote the top post of all time in f/{{forum}}',
    composes: [305, 306],
    // Only forums where these are two posts without a vote of mine, and where the upvote cannot lift
    // the newest post to the top, so both votes land on the posts the eval checks in either order.
    drafts: ({ fresh }) =>
      forums(fresh.reddit).flatMap((forum) => {
        const s = fresh.reddit;
        const [newest] = s.inForum(forum, 'new');
        const [top] = s.inForum(forum, 'top');
        if (!newest || !top || newest.id === top.id || s.votes.has(newest.id) || s.votes.has(top.id) || s.score(newest) + 1 >= s.score(top)) return [];
        return [
          {
            params: { forum },
            startUrl: HOME,
            eval: programHtml([
              { url: postUrl(newest), locator: VOTE_LOCATOR, required_contents: { must_include: ['vote vote--user-upvoted'] } },
              { url: postUrl(top), locator: VOTE_LOCATOR, required_contents: { must_include: ['vote vote--user-downvoted'] } },
            ]),
            oracle: [
              ...openForum(forum),
              click(link('New')),
              click({ tag: 'button', attributes: { title: 'Upvote' } }),
              click(link('Top')),
              click({ tag: 'button', attributes: { title: 'Downvote' } }),
              exit(DONE),
            ],
          },
        ];
      }),
  },
];
