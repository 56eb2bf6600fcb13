/**
 * OpenAI Chat Completions streaming, as the API sends it: `data: {chat.completion.chunk}` lines,
 * tool-call arguments split across chunks by `index`, `finish_reason` on the last choice chunk, a
 * final usage-only chunk (`stream_options.include_usage`), then `data: [DONE]`.
 */
import type { WireReply } from './loopbackServer.js';

export interface OpenAiToolCall {
  id: string;
  name: string;
  /** The arguments as JSON text; sent in `pieces` chunks. */
  arguments: string;
}

const base = { id: 'chatcmpl-dsh', object: 'chat.completion.chunk', created: 1_760_000_000, model: 'gpt-test' };

function chunk(delta: Record<string, unknown>, finishReason: string | null = null) {
  return { data: { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] } };
}

/** Splits a string into `n` roughly equal pieces (at least one). */
export function split(text: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, n)));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}

/** The events of one streamed Chat Completions response. */
export function openAiChatEvents(options: {
  text?: string[];
  toolCalls?: OpenAiToolCall[];
  /** Argument pieces per call (default 3). */
  pieces?: number;
  /** Interleave the calls' argument pieces (index 0, 1, 0, 1, …) instead of one call after another. */
  interleave?: boolean;
  finishReason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
}): { data: unknown }[] {
  const events: { data: unknown }[] = [chunk({ role: 'assistant', content: '' })];
  for (const t of options.text ?? []) events.push(chunk({ content: t }));
  const calls = options.toolCalls ?? [];
  const pieces = calls.map((c) => split(c.arguments, options.pieces ?? 3));
  const head = (i: number) => ({ index: i, id: calls[i]!.id, type: 'function', function: { name: calls[i]!.name, arguments: '' } });
  const piece = (i: number, p: string) => ({ index: i, function: { arguments: p } });
  if (options.interleave) {
    calls.forEach((_, i) => events.push(chunk({ tool_calls: [head(i)] })));
    const rounds = Math.max(0, ...pieces.map((p) => p.length));
    for (let r = 0; r < rounds; r++) calls.forEach((_, i) => pieces[i]![r] !== undefined && events.push(chunk({ tool_calls: [piece(i, pieces[i]![r]!)] })));
  } else {
    calls.forEach((_, i) => {
      events.push(chunk({ tool_calls: [head(i)] }));
      for (const p of pieces[i]!) events.push(chunk({ tool_calls: [piece(i, p)] }));
    });
  }
  events.push(chunk({}, options.finishReason ?? (calls.length ? 'tool_calls' : 'stop')));
  const usage = options.usage ?? { prompt_tokens: 11, completion_tokens: 7 };
  events.push({ data: { ...base, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } });
  events.push({ data: '[DONE]' });
  return events;
}

/** A streamed Chat Completions reply. */
export function openAiChatReply(options: Parameters<typeof openAiChatEvents>[0] & { dropAfter?: number }): WireReply {
  return { kind: 'sse', events: openAiChatEvents(options), ...(options.dropAfter !== undefined ? { dropAfter: options.dropAfter } : {}) };
}

/** An OpenAI error body with a status (429 with `retry-after`, 400 `context_length_exceeded`, …). */
export function openAiError(status: number, error: { message: string; type: string; code?: string | null }, headers?: Record<string, string>): WireReply {
  return { kind: 'json', status, body: { error: { param: null, code: null, ...error } }, ...(headers ? { headers } : {}) };
}
