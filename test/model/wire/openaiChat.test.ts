/**
 * `@ai-sdk/openai` (`.chat()`, the real package) against a loopback server speaking OpenAI Chat
 * Completions streaming: text deltas, tool-call arguments split across chunks, parallel calls,
 * finish_reason, usage, 429 + Retry-After, context-length errors, a connection cut mid-stream.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveModel } from '../../../src/adapters/model/providers.js';
import { LogEventSchema } from '../../../src/protocol/index.js';
import { createRequestRetryPolicy } from '../../../src/runtime/requestErrors.js';
import { startLoopbackServer, type LoopbackServer } from './loopbackServer.js';
import { openAiChatReply, openAiError, type OpenAiToolCall } from './openaiChat.js';
import { ofType, wireRuntime } from './harness.js';

let server: LoopbackServer;
beforeEach(async () => {
  server = await startLoopbackServer();
});
afterEach(async () => {
  await server.close();
});

const model = () => resolveModel('openai:gpt-test', { baseUrl: `${server.url}/v1`, env: { OPENAI_API_KEY: 'sk-test' } });
const calls: OpenAiToolCall[] = [
  { id: 'call_a', name: 'read', arguments: '{"path":"a.txt"}' },
  { id: 'call_b', name: 'read', arguments: '{"path":"b.txt"}' },
  { id: 'call_c', name: 'read', arguments: '{"path":"c.txt"}' },
];

describe('OpenAI Chat Completions over the wire', () => {
  for (const interleave of [false, true]) {
    it(`a turn with three parallel calls (argument pieces ${interleave ? 'interleaved' : 'one call after another'}) completes; results replay in call order`, async () => {
      server.reply(
        openAiChatReply({ text: ['Reading ', 'three files.'], toolCalls: calls, interleave, usage: { prompt_tokens: 100, completion_tokens: 20 } }),
        openAiChatReply({ text: ['All ', 'three read.'], usage: { prompt_tokens: 150, completion_tokens: 5 } }),
      );
      const { rt } = wireRuntime({ callOptions: { temperature: 0.5, headers: { 'x-from': 'runtime' } } });
      const result = await rt.startTurn({
        model: await model(),
        input: 'read a, b and c',
        callOptions: { maxOutputTokens: 321, temperature: 0.2, toolChoice: { type: 'auto' }, headers: { 'x-turn': 'yes' } },
      }).done;

      expect(result).toMatchObject({ outcome: 'completed', steps: 2, text: 'All three read.' });
      expect(result.usage).toEqual({ inputTokens: 250, outputTokens: 25, cacheReadTokens: 0, reasoningTokens: 0, requests: 2 });
      const events = rt.log.events();
      for (const e of events) LogEventSchema.parse(e);
      expect(ofType(events, 'tool/call').map((e) => [e.callId, e.input, e.index])).toEqual([
        ['call_a', '{"path":"a.txt"}', 0],
        ['call_b', '{"path":"b.txt"}', 1],
        ['call_c', '{"path":"c.txt"}', 2],
      ]);
      // a.txt is the slowest, yet results are committed in the model's order.
      expect(ofType(events, 'tool/result').map((e) => e.callId)).toEqual(['call_a', 'call_b', 'call_c']);
      expect(ofType(events, 'step/end').map((e) => [e.finishReason, e.usage])).toEqual([
        ['tool-calls', { inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, reasoningTokens: 0, requests: 1 }],
        ['stop', { inputTokens: 150, outputTokens: 5, cacheReadTokens: 0, reasoningTokens: 0, requests: 1 }],
      ]);

      // What the package sent: call options, headers, then the tool results in call order.
      const [first, second] = server.requests;
      expect(first!.body).toMatchObject({ model: 'gpt-test', stream: true, max_tokens: 321, temperature: 0.2, tool_choice: 'auto' });
      expect(first!.headers['x-turn']).toBe('yes');
      expect(first!.headers['x-from']).toBe('runtime');
      expect(first!.headers.authorization).toBe('Bearer sk-test');
      const msgs = second!.body.messages as { role: string; content: unknown; tool_calls?: { id: string }[]; tool_call_id?: string }[];
      const assistant = msgs.find((m) => m.role === 'assistant')!;
      expect(assistant.content).toBe('Reading three files.');
      expect(assistant.tool_calls!.map((c) => c.id)).toEqual(['call_a', 'call_b', 'call_c']);
      expect(msgs.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])).toEqual([
        ['call_a', 'contents of a.txt'],
        ['call_b', 'contents of b.txt'],
        ['call_c', 'contents of c.txt'],
      ]);
    });
  }

  it('dispatches a call when its arguments are complete, before the stream closes (tool-call parts only come at the close)', async () => {
    const order: string[] = [];
    let toolStarted!: () => void;
    const started = new Promise<void>((r) => (toolStarted = r));
    // The server holds the rest of the response (finish_reason, usage, [DONE]) until the first
    // tool has started, or a generous fallback elapses (without streaming dispatch: the hang guard).
    const until = Promise.race([started, new Promise((r) => setTimeout(r, 10_000))]);
    const reply = openAiChatReply({ toolCalls: calls.slice(0, 1) });
    if (reply.kind !== 'sse') throw new Error('unreachable');
    server.reply({ ...reply, gate: { after: reply.events.length - 3, until, onResume: () => order.push('server sent finish') } }, openAiChatReply({ text: ['done'] }));
    const { rt } = wireRuntime({
      onStart: (p) => {
        order.push(`tool started ${p}`);
        toolStarted();
      },
    });
    const result = await rt.startTurn({ model: await model(), input: 'read a' }).done;
    expect(result.outcome).toBe('completed');
    expect(order).toEqual(['tool started a.txt', 'server sent finish']);
  }, 30_000);

  it('429 with Retry-After is retried after the time the server asked for', async () => {
    server.reply(
      openAiError(429, { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' }, { 'retry-after': '1' }),
      openAiChatReply({ text: ['fine now'] }),
    );
    const { rt } = wireRuntime();
    const result = await rt.startTurn({ model: await model(), input: 'hi' }).done;
    expect(result).toMatchObject({ outcome: 'completed', text: 'fine now' });
    expect(ofType(rt.log.events(), 'agent/request-error').map((e) => [e.kind, e.status, e.action, e.delayMs])).toEqual([['retryable', 429, 'retry', 1000]]);
    expect(server.requests).toHaveLength(2);
  });

  it('a context-length error compacts older results, then the retried request carries the stubs', async () => {
    server.reply(
      openAiChatReply({ toolCalls: [{ id: 'call_big', name: 'read', arguments: '{"path":"big.txt"}' }] }),
      openAiChatReply({ toolCalls: [{ id: 'call_b', name: 'read', arguments: '{"path":"b.txt"}' }] }),
      openAiError(400, { message: "This model's maximum context length is 8192 tokens.", type: 'invalid_request_error', code: 'context_length_exceeded' }),
      openAiChatReply({ text: ['summary'] }),
    );
    const { rt } = wireRuntime();
    const result = await rt.startTurn({ model: await model(), input: 'read big, then b' }).done;
    expect(result).toMatchObject({ outcome: 'completed', steps: 3, text: 'summary' });
    const events = rt.log.events();
    expect(ofType(events, 'agent/request-error').map((e) => [e.kind, e.status, e.action])).toEqual([['context-overflow', 400, 'compact']]);
    expect(ofType(events, 'context/compacted')).toHaveLength(1);
    const bigResult = (req: number) => (server.requests[req]!.body.messages as { tool_call_id?: string; content: string }[]).find((m) => m.tool_call_id === 'call_big')!.content;
    expect(bigResult(2)).toHaveLength(20_000);
    expect(bigResult(3)).toMatch(/^\[result compacted: 20,000 chars/);
  });

  it('a connection cut before any call completed is retried; the message names the real cause', async () => {
    server.reply(openAiChatReply({ text: ['Let me'], toolCalls: calls.slice(0, 1), dropAfter: 3 }), openAiChatReply({ text: ['answer'] }));
    const { rt } = wireRuntime();
    const result = await rt.startTurn({ model: await model(), input: 'hi' }).done;
    expect(result).toMatchObject({ outcome: 'completed', text: 'answer' });
    const [err] = ofType(rt.log.events(), 'agent/request-error');
    expect(err).toMatchObject({ kind: 'retryable', action: 'retry' });
    expect(err!.message).toMatch(/terminated/);
    expect(err!.message).toMatch(/UND_ERR_SOCKET/);
  });

  it('with no retries left, a cut connection fails the turn with a clear request error', async () => {
    server.reply(openAiChatReply({ text: ['Let me'], dropAfter: 2 }));
    const { rt } = wireRuntime({ retryPolicy: createRequestRetryPolicy({ maxRetries: 0 }) });
    const result = await rt.startTurn({ model: await model(), input: 'hi' }).done;
    expect(result.outcome).toBe('failed');
    expect(result.error).toMatch(/^model request failed \(retryable\): .*terminated.*UND_ERR_SOCKET/);
    expect(result.error).not.toMatch(/\n/);
  });

  it('a connection cut after a call completed keeps that call and its result, and goes on with a new request', async () => {
    // call_a's arguments are complete, call_b's are half sent when the connection dies.
    server.reply(openAiChatReply({ toolCalls: calls.slice(0, 2), dropAfter: 7 }), openAiChatReply({ text: ['got a'] }));
    const { rt, started } = wireRuntime();
    const result = await rt.startTurn({ model: await model(), input: 'read a and b' }).done;
    expect(result).toMatchObject({ outcome: 'completed', steps: 2, text: 'got a' });
    expect(started).toEqual(['a.txt']);
    const events = rt.log.events();
    expect(ofType(events, 'tool/result').map((e) => [e.callId, e.result.isError])).toEqual([['call_a', false]]);
    const [err] = ofType(events, 'agent/request-error');
    expect(err).toMatchObject({ stepIndex: 0, kind: 'retryable', action: 'retry' });
    expect(err!.message).toMatch(/terminated.*broke off after 1 call/);
    expect(ofType(events, 'step/end').map((e) => e.finishReason)).toEqual(['error', 'stop']);
    const msgs = server.requests[1]!.body.messages as { role: string; tool_call_id?: string; content: string }[];
    expect(msgs.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content])).toEqual([['call_a', 'contents of a.txt']]);
  });
});
