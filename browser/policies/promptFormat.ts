/**
 * How a completions actor's prompt is written (`models.actor.promptFormat`):
 *
 *   webrl-llama3   the released checkpoints' prompt (prompt.ts), byte for byte; end of turn `<|eot_id|>`
 *   chat-template  the served model's own chat template (its tokenizer files, rendered here with
 *                  @huggingface/jinja): one user turn per round, `Task Instruction: {intent}\n\n` before
 *                  the first, `Round {i}\n\n{observation}` each (past observations as in prompt.ts), the
 *                  past raw outputs as assistant turns, then the generation prompt
 *
 * Every user of the actor's text (rollouts, log-prob scoring, training records, the critic) renders it
 * here, so they all see the same text. A BOS the server's tokenizer adds itself is left out of the text
 * (the template may write it too), so no prompt starts with two. The end of turn is what the model writes
 * after its answer: rollouts stop on it, and it is scored and trained with the response.
 */
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { buildPrompt, observationRoom, pastObservation, STOP_TOKEN } from './prompt';
import type { PromptFormatName } from './promptFormatNames';

export interface PromptFormat {
  readonly name: PromptFormatName;
  /** The text the model ends its turn with (rollouts stop on it; it is scored with the response). */
  readonly endOfTurn: string;
  /** The characters of the observation the format keeps by itself (webrl-llama3's character budget). */
  observationRoom(intent: string, pastResponses: readonly string[]): number;
  render(intent: string, pastResponses: readonly string[], observation: string): string;
  /** chat-template only: any conversation as the model's prompt (generation prompt added), for SFT data given as chats. */
  renderChat?(messages: { role: 'system' | 'user' | 'assistant'; content: string }[]): string;
}

export const webrlLlama3Format: PromptFormat = {
  name: 'webrl-llama3',
  endOfTurn: STOP_TOKEN,
  observationRoom,
  render: buildPrompt,
};

type Message = { role: 'system' | 'user' | 'assistant'; content: string };

/** The conversation of a round: what the chat template renders. */
export function chatMessages(intent: string, pastResponses: readonly string[], observation: string): Message[] {
  const user = (index: number, seen: string): Message => ({
    role: 'user',
    content: `${index === 0 ? `Task Instruction: ${intent}\n\n` : ''}Round ${index}\n\n${seen}`,
  });
  return [
    ...pastResponses.flatMap((response, i): Message[] => [user(i, pastObservation(i, intent)), { role: 'assistant', content: response }]),
    user(pastResponses.length, observation),
  ];
}

/** A special token as tokenizer_config.json writes it: a string, or {content: string}. */
function tokenText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const content = (value as { content?: unknown } | null)?.content;
  return typeof content === 'string' ? content : undefined;
}

/** The special token the tokenizer puts before every text (tokenizer.json's post-processor), if any. */
function addedPrefix(tokenizerJson: unknown, config: Record<string, unknown>): string | undefined {
  const processors = (node: unknown): unknown[] => {
    const { type, processors: inner } = (node ?? {}) as { type?: unknown; processors?: unknown };
    return type === 'Sequence' && Array.isArray(inner) ? inner.flatMap(processors) : [node];
  };
  for (const processor of processors((tokenizerJson as { post_processor?: unknown } | null)?.post_processor)) {
    const { type, single } = (processor ?? {}) as { type?: unknown; single?: unknown };
    if (type !== 'TemplateProcessing' || !Array.isArray(single)) continue;
    const first = (single[0] as { SpecialToken?: { id?: unknown } } | undefined)?.SpecialToken?.id;
    return typeof first === 'string' ? first : undefined;
  }
  // Older Llama-style tokenizers say it in the config.
  return config.add_bos_token === true ? tokenText(config.bos_token) : undefined;
}

function readJson(path: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/**
 * The template's source and the file it is in: chat_template.jinja beside the tokenizer, else
 * tokenizer_config.json's chat_template (its `default`).
 */
function templateSource(dir: string, config: Record<string, unknown>): { text: string; file: string } {
  const file = join(dir, 'chat_template.jinja');
  if (existsSync(file)) return { text: readFileSync(file, 'utf8'), file };
  const template = config.chat_template;
  const configFile = join(dir, 'tokenizer_config.json');
  if (typeof template === 'string') return { text: template, file: `${configFile} (chat_template)` };
  if (Array.isArray(template)) {
    const named = (template as { name?: unknown; template?: unknown }[]).find((entry) => entry.name === 'default')?.template;
    if (typeof named === 'string') return { text: named, file: `${configFile} (chat_template default)` };
  }
  throw new Error(`${dir} has no chat template (chat_template.jinja, or chat_template in tokenizer_config.json)`);
}

const formats = new Map<string, PromptFormat>();

/**
 * The chat-template format of the model whose tokenizer files are in `dir` (a Hugging Face model
 * directory: tokenizer_config.json, tokenizer.json, chat_template.jinja when the template is there),
 * loaded once per directory and process. Throws naming the file for a directory it cannot use.
 */
export function chatTemplateFormat(dir: string): PromptFormat {
  const known = formats.get(dir);
  if (known) return known;
  const config = readJson(join(dir, 'tokenizer_config.json'));
  const source = templateSource(dir, config);
  const template = (() => {
    try {
      return new Template(source.text);
    } catch (error) {
      throw new Error(`${source.file}: the chat template does not parse: ${(error as Error).message}`);
    }
  })();
  const prefix = addedPrefix(existsSync(join(dir, 'tokenizer.json')) ? readJson(join(dir, 'tokenizer.json')) : null, config);
  const specials = Object.fromEntries(
    ['bos_token', 'eos_token', 'pad_token', 'unk_token'].flatMap((key) => {
      const text = tokenText(config[key]);
      return text === undefined ? [] : [[key, text]];
    }),
  );
  const render = (messages: Message[], generation: boolean) => template.render({ ...specials, messages, add_generation_prompt: generation });
  const firstRender = (messages: Message[], generation: boolean) => {
    try {
      return render(messages, generation);
    } catch (error) {
      throw new Error(`${source.file}: the chat template fails to render a conversation: ${(error as Error).message}`);
    }
  };

  // The end of turn, as webrl-torch finds it (encoding.py end_of_turn): what the template writes right
  // after an assistant message's content up to the first white space (ChatML's `<|im_end|>`, not the
  // newline between turns), else the EOS.
  const marker = '\u2063assistant-content\u2063';
  const conversation = firstRender(
    [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: marker },
    ],
    false,
  );
  const at = conversation.indexOf(marker);
  const endOfTurn =
    (at < 0
      ? ''
      : conversation
          .slice(at + marker.length)
          .trimStart()
          .split(/\s/)[0]) ||
    specials.eos_token ||
    '';
  if (endOfTurn === '')
    throw new Error(`the chat template in ${dir} writes nothing after an assistant message and the tokenizer has no eos_token: no end of turn to stop on`);

  const renderChat = (messages: Message[]) => {
    const text = render(messages, true);
    return prefix !== undefined && text.startsWith(prefix) ? text.slice(prefix.length) : text;
  };
  const format: PromptFormat = {
    name: 'chat-template',
    endOfTurn,
    observationRoom: () => Number.POSITIVE_INFINITY,
    render: (intent, pastResponses, observation) => renderChat(chatMessages(intent, pastResponses, observation)),
    renderChat,
  };
  formats.set(dir, format);
  return format;
}

export function promptFormatOf(settings: { promptFormat: PromptFormatName; tokenizer?: string | undefined }): PromptFormat {
  if (settings.promptFormat === 'webrl-llama3') return webrlLlama3Format;
  if (!settings.tokenizer) throw new Error('promptFormat chat-template needs models.actor.tokenizer (the model directory with its tokenizer files)');
  return chatTemplateFormat(settings.tokenizer);
}
