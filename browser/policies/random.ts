/**
 * A uniformly random agent: each round it picks one action among those valid for the current
 * observation (every element can be clicked or hovered, text fields typed or searched, dropdowns set to
 * one of their options; scrolling, Enter, history moves and exit are always valid). The choice is seeded
 * by (seed, task, round), so a rollout is reproducible whatever the scheduling.
 */
import type { Action, ObservedElement } from '../contract';
import { formatAction } from '../grammar';
import { SeededRng, deriveSeed } from '../rng';
import { buildPrompt } from './prompt';
import type { Policy, PolicyInput, PolicyOutput } from './policy';

export interface RandomPolicyOptions {
  seed?: number;
}

const TEXT_INPUT_TYPES = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'number', 'password']);
const TEXT_ROLES = new Set(['textbox', 'searchbox', 'combobox']);
const FALLBACK_WORDS = ['shoes', 'order', 'price', 'red', 'review', 'total', '2023', 'yes'];

function isTextField(element: ObservedElement): boolean {
  if (element.tag === 'textarea') return true;
  if (element.tag === 'input') return TEXT_INPUT_TYPES.has((element.attributes.type ?? '').toLowerCase());
  const editable = element.attributes.contenteditable;
  return (editable !== undefined && editable !== 'false') || TEXT_ROLES.has(element.role ?? '');
}

/** Words to type: from the page's element texts, or a fixed list when the page has none. */
function wordsOf(elements: readonly ObservedElement[]): string[] {
  const words = elements.flatMap((e) => (e.fullText ?? e.text).split(' ')).filter((w) => /^[\w-]{2,}$/.test(w));
  return words.length > 0 ? words : FALLBACK_WORDS;
}

/** Every valid action as a thunk that draws its own argument, so the choice among them stays uniform. */
function candidates(elements: readonly ObservedElement[], rng: SeededRng): (() => Action)[] {
  const words = wordsOf(elements);
  const all: (() => Action)[] = [];
  for (const element of elements) {
    const id = element.id;
    all.push(
      () => ({ kind: 'Click', element: id }),
      () => ({ kind: 'Hover', element: id }),
    );
    if (isTextField(element)) {
      all.push(() => ({ kind: 'Type', element: id, argument: rng.pick(words) }));
      all.push(() => ({ kind: 'Search', element: id, argument: rng.pick(words) }));
    }
    const options = element.options ?? [];
    if (options.length > 0) all.push(() => ({ kind: 'Select Dropdown Option', element: id, argument: rng.pick(options) }));
  }
  for (const kind of ['Scroll Up', 'Scroll Down', 'Press Enter', 'Go Backward', 'Go Forward'] as const) all.push(() => ({ kind }));
  all.push(() => ({ kind: 'exit', message: rng.pick(words) }));
  return all;
}

export function createRandomPolicy(options: RandomPolicyOptions = {}): Policy {
  const seed = options.seed ?? 0;
  return {
    name: 'random',
    async act({ task, observation, history }: PolicyInput): Promise<PolicyOutput> {
      const rng = new SeededRng(deriveSeed(seed, task.task_id, history.length));
      const action = rng.pick(candidates(observation.elements, rng))();
      const prompt = buildPrompt(
        task.intent,
        history.map((h) => h.response),
        observation.html,
      );
      return { response: formatAction(action), prompt };
    },
  };
}
