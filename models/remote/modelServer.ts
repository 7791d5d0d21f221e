/**
 * What the serving handoff asks of an OpenAI-compatible server:
 *
 *   GET  {baseUrl}/models                 -> { data: [{ id, root?, parent? }] }   (vLLM lists a LoRA
 *                                            adapter with its lora_path as `root`)
 *   POST {baseUrl}/load_lora_adapter      { lora_name, lora_path }   (vLLM, VLLM_ALLOW_RUNTIME_LORA_UPDATING)
 *   POST {baseUrl}/unload_lora_adapter    { lora_name }
 *
 * A non-2xx reply is a ModelServerError carrying the server's own message. The key, if any, goes only in
 * the Authorization header.
 */
import type { Secret } from '../../config/secrets';

export interface ServedModel {
  id: string;
  root?: string;
}

export class ModelServerError extends Error {
  override name = 'ModelServerError';
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

export interface ModelServerOptions {
  baseUrl: string;
  apiKey?: Secret;
  timeoutMs?: number;
}

async function call(options: ModelServerOptions, method: 'GET' | 'POST', path: string, body?: unknown): Promise<string> {
  const url = `${options.baseUrl.replace(/\/+$/, '')}${path}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey.reveal()}` } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(options.timeoutMs ?? 120_000),
    });
  } catch (error) {
    throw new ModelServerError(`${method} ${url} failed: ${(error as Error).message}`, null);
  }
  const text = await response.text();
  if (!response.ok) {
    // vLLM answers {"error": {"message"}} or {"message"} or plain text.
    let message = text;
    try {
      const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string; detail?: string };
      message = (typeof parsed.error === 'object' ? parsed.error?.message : parsed.error) ?? parsed.message ?? parsed.detail ?? text;
    } catch {
      // Plain text.
    }
    throw new ModelServerError(`${method} ${url} answered ${response.status}: ${message}`, response.status);
  }
  return text;
}

export async function listServedModels(options: ModelServerOptions): Promise<ServedModel[]> {
  const text = await call(options, 'GET', '/models');
  let data: unknown;
  try {
    data = (JSON.parse(text) as { data?: unknown }).data;
  } catch {
    data = undefined;
  }
  if (!Array.isArray(data)) throw new ModelServerError(`GET ${options.baseUrl}/models did not answer { data: [...] }`, null);
  return data.flatMap((entry: { id?: unknown; root?: unknown }) =>
    typeof entry?.id === 'string' ? [{ id: entry.id, ...(typeof entry.root === 'string' ? { root: entry.root } : {}) }] : [],
  );
}

export async function loadLoraAdapter(options: ModelServerOptions, name: string, path: string): Promise<void> {
  await call(options, 'POST', '/load_lora_adapter', { lora_name: name, lora_path: path });
}

export async function unloadLoraAdapter(options: ModelServerOptions, name: string): Promise<void> {
  await call(options, 'POST', '/unload_lora_adapter', { lora_name: name });
}
