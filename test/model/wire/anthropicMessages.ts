/**
 * Anthropic Messages streaming, as the API sends it: named SSE events `message_start`,
 * `content_block_start/delta/stop` (text, thinking with its signature, tool_use with
 * `input_json_delta` pieces), `message_delta` (stop_reason, usage), `message_stop`, `ping`, and the
 * in-stream `error` event (for example `overloaded_error`) under HTTP 200.
 */
import { split } from './openaiChat.js';
import type { WireReply } from './loopbackServer.js';

export type AnthropicBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: string };

export function anthropicEvents(options: {
  blocks: AnthropicBlock[];
  stopReason?: string;
  usage?: { input_tokens: number; output_tokens: number };
  /** An in-stream `event: error` after this many content blocks (the response then ends). */
  errorAfterBlocks?: { after: number; type: string; message: string };
}): { event: string; data: unknown }[] {
  const usage = options.usage ?? { input_tokens: 21, output_tokens: 9 };
  const ev: { event: string; data: unknown }[] = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: { id: 'msg_dsh', type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input_tokens, output_tokens: 1 } },
      },
    },
    { event: 'ping', data: { type: 'ping' } },
  ];
  options.blocks.forEach((b, index) => {
    if (options.errorAfterBlocks && index === options.errorAfterBlocks.after) return;
    if (options.errorAfterBlocks && index > options.errorAfterBlocks.after) return;
    const delta = (d: unknown) => ev.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: d } });
    switch (b.type) {
      case 'text':
        ev.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
        for (const p of split(b.text, 2)) delta({ type: 'text_delta', text: p });
        break;
      case 'thinking':
        ev.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } } });
        for (const p of split(b.thinking, 2)) delta({ type: 'thinking_delta', thinking: p });
        delta({ type: 'signature_delta', signature: b.signature });
        break;
      case 'redacted_thinking':
        ev.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: b.data } } });
        break;
      case 'tool_use':
        ev.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } } });
        for (const p of split(b.input, 3)) delta({ type: 'input_json_delta', partial_json: p });
        break;
    }
    ev.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  if (options.errorAfterBlocks) {
    ev.push({ event: 'error', data: { type: 'error', error: { type: options.errorAfterBlocks.type, message: options.errorAfterBlocks.message } } });
    return ev;
  }
  const hasTools = options.blocks.some((b) => b.type === 'tool_use');
  ev.push({
    event: 'message_delta',
    data: { type: 'message_delta', delta: { stop_reason: options.stopReason ?? (hasTools ? 'tool_use' : 'end_turn'), stop_sequence: null }, usage: { output_tokens: usage.output_tokens } },
  });
  ev.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return ev;
}

export function anthropicReply(options: Parameters<typeof anthropicEvents>[0] & { dropAfter?: number }): WireReply {
  return { kind: 'sse', events: anthropicEvents(options), ...(options.dropAfter !== undefined ? { dropAfter: options.dropAfter } : {}) };
}

/** An Anthropic error body (`{type:'error', error:{type, message}}`) with a status. */
export function anthropicError(status: number, type: string, message: string, headers?: Record<string, string>): WireReply {
  return { kind: 'json', status, body: { type: 'error', error: { type, message } }, ...(headers ? { headers } : {}) };
}
