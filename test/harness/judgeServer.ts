/**
 * An OpenAI-compatible chat server that plays WebArena's LLM judge: it reads the grading requests in
 * the format the real judge prompts use (the `reference answer:` / `student answer:` lines of
 * fuzzy_match, the `actual` / `reported unachievable reason:` lines of ua_match) and answers with a
 * short justification ending in the verdict words the harness parses. Its rules are deterministic:
 * every reference word in the answer is "correct", some is "partially correct", none "incorrect";
 * reasons that share a content word are the "same". An answer containing GARBLE gets a reply with
 * no verdict at all.
 */
import { startServer, type RecordedRequest, type TestServer } from '../models/fixtures/servers';

export interface JudgeRequestBody {
  model: string;
  temperature?: number;
  max_completion_tokens?: number;
  messages: { role: string; content: string }[];
}

export interface JudgeServer extends TestServer {
  /** The `/v1` base URL an OpenAI client takes. */
  baseURL: string;
  /** The chat requests received, parsed. */
  bodies(): JudgeRequestBody[];
}

const STOPWORDS = new Set(['the', 'this', 'that', 'there', 'with', 'from', 'have', 'does', 'about', 'which', 'because', 'cannot', 'task', 'reason']);

function field(text: string, label: string): string | undefined {
  return new RegExp(`^${label}: (.*)$`, 'm').exec(text)?.[1];
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The judge's reply to one user message. */
export function judgeReply(user: string): string {
  const reference = field(user, 'reference answer');
  const student = field(user, 'student answer');
  if (reference !== undefined && student !== undefined) {
    if (student.toLowerCase().includes('garble')) return 'I would rather not say.';
    const answer = new Set(words(student));
    const wanted = words(reference);
    const found = wanted.filter((w) => answer.has(w)).length;
    const verdict = found === wanted.length ? 'correct' : found > 0 ? 'partially correct' : 'incorrect';
    return `Comparing the student's answer with the reference, I conclude: ${verdict}.`;
  }
  const actual = field(user, 'actual unachievable reason');
  const reported = field(user, 'reported unachievable reason');
  if (actual !== undefined && reported !== undefined) {
    if (reported.toLowerCase().includes('garble')) return 'Hard to tell.';
    const known = new Set(words(actual).filter((w) => w.length > 3 && !STOPWORDS.has(w)));
    return words(reported).some((w) => known.has(w)) ? 'The two reasons agree: same' : 'The reasons do not agree: different';
  }
  return 'I do not understand the request.';
}

export async function startJudgeServer(): Promise<JudgeServer> {
  const handle = (request: RecordedRequest) => {
    const body = request.body as JudgeRequestBody;
    const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
    return {
      json: {
        id: 'chatcmpl-judge',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model,
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: judgeReply(user) } }],
        usage: { prompt_tokens: 100, completion_tokens: 12, total_tokens: 112 },
      },
    };
  };
  const server = await startServer(handle);
  return { ...server, baseURL: `${server.url}/v1`, bodies: () => server.requests.map((r) => r.body as JudgeRequestBody) };
}
