/**
 * Oracle solvers for MiniWoB++'s email inbox types. The instruction names the sender and what to do
 * (reply with a text, forward to someone, delete, star), in the fixed wording of email-inbox or in the
 * free wording of the -nl and -nl-turk types. The plan finds the sender's email through the inbox's
 * search (the inbox box shows four of up to twelve emails; the search lists the sender's at the top),
 * opens it and acts on it with the email view's controls, each named as the observation names it.
 */
import type { OracleStep } from '../../../../browser/contract';
import { TEXT_TASK_TYPES } from '../catalog';
import type { Solver } from './solver';
import { click, quoted, type } from './steps';

export type EmailAction = { kind: 'delete' | 'important' } | { kind: 'reply'; text: string } | { kind: 'forward'; to: string };

export interface EmailTask {
  sender: string;
  action: EmailAction;
}

/** Capitalised words of the free wordings that are not names. */
const NOT_NAMES = new Set(
  (
    'A Alexa An And Answer Any Ask Automatically Can Copy Could Create Delete Do Email Emails Find First Flag Forward Foward FOrward Get Give Go ' +
    'Hey Hi Highlight I If In Inbox Important It Just Let Locate Look Make Mark May Me My Navigate Now Ok Okay Open Please Primary Pull Put ' +
    'Remind Remove Reply Replay Respond Resend Retrieve Save Say Search Select Send Set Simply Siri Star Tag Take Tell Text Thanks The There ' +
    'This Throw To Trash Tuesday Will WiIl Would Yes You Your'
  ).split(' '),
);

/** Capitalised words that name people, in order, without a possessive 's. */
function names(sentence: string): string[] {
  const found: string[] = [];
  for (const match of sentence.matchAll(/\b([A-Z][a-z]+)(?:'s)?\b/g)) {
    const name = match[1]!;
    if (!NOT_NAMES.has(name) && !/^I'/.test(name) && !found.includes(name)) found.push(name);
  }
  return found;
}

/** Whether the sentence marks `name` as the one who sent the email ("from X", "by X", "X's", "X sent", "X wrote"). */
function marksSender(sentence: string, name: string): boolean {
  return new RegExp(`\\b(?:from|by|of)\\s+${name}\\b|\\b${name}'s\\b|\\b${name}\\s+(?:sent|wrote|wants his)`).test(sentence);
}

/** The sender and the action an email-inbox instruction asks for (either wording); undefined when it cannot be read. */
export function readEmailTask(intent: string): EmailTask | undefined {
  const fixed = /^Find the email by (\S+) and (?:reply to them with the text "(.*)"|forward that email to (\S+?)|click the (trash|star) icon to .*)\.$/.exec(
    intent,
  );
  if (fixed) {
    const [, sender, text, to, icon] = fixed;
    if (text !== undefined) return { sender: sender!, action: { kind: 'reply', text } };
    if (to !== undefined) return { sender: sender!, action: { kind: 'forward', to } };
    return { sender: sender!, action: { kind: icon === 'trash' ? 'delete' : 'important' } };
  }
  const [message] = quoted(intent);
  const withoutMessage = message === undefined ? intent : intent.replace(`"${message}"`, '');
  const people = names(withoutMessage);
  if (message !== undefined) return people.length === 1 ? { sender: people[0]!, action: { kind: 'reply', text: message } } : undefined;
  if (people.length === 2) {
    const senders = people.filter((name) => marksSender(withoutMessage, name));
    const sender = senders.length === 1 ? senders[0]! : people[people.length - 1]!;
    return { sender, action: { kind: 'forward', to: people.find((name) => name !== sender)! } };
  }
  if (people.length !== 1) return undefined;
  const sender = people[0]!;
  if (/\b(?:delet|trash|remov|discard|throw|get rid|eras)/i.test(intent)) return { sender, action: { kind: 'delete' } };
  if (/\b(?:star|important|flag|mark|highlight|favou?rite|priority)\b/i.test(intent)) return { sender, action: { kind: 'important' } };
  return undefined;
}

/** Search the inbox for the sender, open their email, then act on it. */
export function emailPlan({ sender, action }: EmailTask): OracleStep[] {
  const open: OracleStep[] = [
    click({ label: 'search' }),
    type({ tag: 'input', attributes: { placeholder: 'Search' } }, sender),
    click({ textIncludes: sender }),
  ];
  switch (action.kind) {
    case 'delete':
      return [...open, click({ label: 'delete' })];
    case 'important':
      return [...open, click({ label: 'star' })];
    case 'reply':
      return [...open, click({ text: 'Reply' }), type({ tag: 'textarea' }, action.text), click({ label: 'send' })];
    case 'forward':
      return [...open, click({ text: 'Forward' }), type({ tag: 'input', attributes: { type: 'text' } }, action.to), click({ label: 'send' })];
  }
}

const solveEmail: Solver = (intent) => {
  const task = readEmailTask(intent);
  return task ? emailPlan(task) : undefined;
};

/** Every email-inbox type of the text subset. */
export const EMAIL_SOLVERS: Readonly<Record<string, Solver>> = Object.fromEntries(
  TEXT_TASK_TYPES.filter((type) => type.startsWith('email-inbox')).map((type) => [type, solveEmail]),
);
