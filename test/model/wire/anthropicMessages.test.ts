/**
 * `@ai-sdk/anthropic` (the real package) against a loopback server speaking Anthropic Messages
 * streaming: thinking blocks with signatures, tool_use with input_json_delta pieces, usage, the
 * in-stream `event: error` under HTTP 200, and the call options that decide `max_tokens`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveModel } from '../../../src/adapters/model/providers.js';
import { LogEventSchema } from '../../../src/protocol/index.js';
import { anthropicReply } from './anthropicMessages.js';
import { startLoopbackServer, type LoopbackServer } from './loopbackServer.js';
import { ofType, wireRuntime } from './harness.js';

let server: LoopbackServer;
beforeEach(async () => {
  server = await startLoopbackServer();
});
afterEach(async () => {
  await server.close();
});

const model = () => resolveModel('anthropic:claude-test', { baseUrl: `${server.url}/v1`, env: { ANTHROPIC_API_KEY: 'sk-ant-test' } });
type Block = { type: string; [k: string]: unknown };
const assistantBlocks = (req: number) =>
  (server.requests[req]!.body.messages as { role: string; content: Block[] }[]).filter((m) => m.role === 'assistant').map((m) => m.content);

describe('Anthropic Messages over the wire', () => {
  it('parallel tool_use blocks complete a turn; thinking is replayed with its signature before the tool_use blocks', async () => {
    server.reply(
      anthropicReply({
        blocks: [
          { type: 'thinking', thinking: 'I should read both files.', signature: 'sig-abc' },
          { type: 'text', text: 'Reading both.' },
          { type: 'tool_use', id: 'toolu_a', name: 'read', input: '{"path":"a.txt"}' },
          { type: 'tool_use', id: 'toolu_b', name: 'read', input: '{"path":"b.txt"}' },
        ],
        usage: { input_tokens: 40, output_tokens: 12 },
      }),
      anthropicReply({ blocks: [{ type: 'text', text: 'Both read.' }], usage: { input_tokens: 90, output_tokens: 3 } }),
    );
    const { rt } = wireRuntime();
    const result = await rt.startTurn({
      model: await model(),
      input: 'read a and b',
      callOptions: { maxOutputTokens: 2048, providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 1024 } } } },
    }).done;
    expect(result).toMatchObject({ outcome: 'completed', steps: 2, text: 'Both read.' });
    expect(result.usage).toMatchObject({ inputTokens: 130, outputTokens: 15, requests: 2 });
    const events = rt.log.events();
    for (const e of events) LogEventSchema.parse(e);
    expect(ofType(events, 'tool/result').map((e) => e.callId)).toEqual(['toolu_a', 'toolu_b']);
    expect(ofType(events, 'llm/stream').filter((e) => e.kind === 'reasoning')).toMatchObject([
      { text: 'I should read both files.', providerMetadata: { anthropic: { signature: 'sig-abc' } } },
    ]);
    // The call options decided max_tokens (not the package's 64000/128000 default: maxOutputTokens
    // plus the thinking budget) and the provider options reached the wire; no warning then.
    expect(server.requests[0]!.body).toMatchObject({ max_tokens: 2048 + 1024, thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(ofType(events, 'warning')).toEqual([]);
    expect(assistantBlocks(1)).toEqual([
      [
        { type: 'thinking', thinking: 'I should read both files.', signature: 'sig-abc' },
        { type: 'text', text: 'Reading both.' },
        { type: 'tool_use', id: 'toolu_a', name: 'read', input: { path: 'a.txt' } },
        { type: 'tool_use', id: 'toolu_b', name: 'read', input: { path: 'b.txt' } },
      ],
    ]);
    const toolResults = (server.requests[1]!.body.messages as { role: string; content: Block[] }[]).filter((m) => m.role === 'user').flatMap((m) => m.content).filter((b) => b.type === 'tool_result');
    expect(toolResults.map((b) => [b.tool_use_id, b.content])).toEqual([
      ['toolu_a', 'contents of a.txt'],
      ['toolu_b', 'contents of b.txt'],
    ]);
  });

  it('redacted thinking is replayed as redacted_thinking', async () => {
    server.reply(
      anthropicReply({ blocks: [{ type: 'redacted_thinking', data: 'ENCRYPTED' }, { type: 'tool_use', id: 'toolu_a', name: 'read', input: '{"path":"a.txt"}' }] }),
      anthropicReply({ blocks: [{ type: 'text', text: 'ok' }] }),
    );
    const { rt } = wireRuntime();
    await rt.startTurn({ model: await model(), input: 'x', callOptions: { maxOutputTokens: 1000 } }).done;
    expect(assistantBlocks(1)[0]![0]).toEqual({ type: 'redacted_thinking', data: 'ENCRYPTED' });
  });

  it("the provider's warnings are logged as warning events (an unknown model without maxOutputTokens)", async () => {
    server.reply(anthropicReply({ blocks: [{ type: 'text', text: 'hi' }] }));
    const { rt } = wireRuntime();
    const result = await rt.startTurn({ model: await model(), input: 'x' }).done;
    expect(result.text).toBe('hi');
    const [w] = ofType(rt.log.events(), 'warning');
    expect(w).toMatchObject({ turnId: result.turnId, stepIndex: 0, code: 'MODEL_WARNING', data: { warning: { type: 'compatibility', feature: 'maxOutputTokens' } } });
    expect(w!.message).toMatch(/^model warning \(compatibility\): maxOutputTokens: /);
  });

  for (const type of ['overloaded_error', 'api_error', 'rate_limit_error']) {
    it(`an in-stream ${type} under HTTP 200 is retried`, async () => {
      server.reply(
        anthropicReply({ blocks: [{ type: 'text', text: 'Let me think' }, { type: 'text', text: 'more' }], errorAfterBlocks: { after: 1, type, message: 'Overloaded' } }),
        anthropicReply({ blocks: [{ type: 'text', text: 'answer' }] }),
      );
      const { rt } = wireRuntime();
      const result = await rt.startTurn({ model: await model(), input: 'x', callOptions: { maxOutputTokens: 100 } }).done;
      expect(result).toMatchObject({ outcome: 'completed', text: 'answer' });
      const [err] = ofType(rt.log.events(), 'agent/request-error');
      expect(err).toMatchObject({ kind: 'retryable', action: 'retry' });
      expect(err!.message).toContain(type);
    });
  }

  it('an in-stream overloaded_error after a tool_use keeps the call and goes on with a new request', async () => {
    server.reply(
      anthropicReply({
        blocks: [{ type: 'tool_use', id: 'toolu_a', name: 'read', input: '{"path":"a.txt"}' }, { type: 'text', text: 'never' }],
        errorAfterBlocks: { after: 1, type: 'overloaded_error', message: 'Overloaded' },
      }),
      anthropicReply({ blocks: [{ type: 'text', text: 'got a' }] }),
    );
    const { rt, started } = wireRuntime();
    const result = await rt.startTurn({ model: await model(), input: 'x', callOptions: { maxOutputTokens: 100 } }).done;
    expect(result).toMatchObject({ outcome: 'completed', steps: 2, text: 'got a' });
    expect(started).toEqual(['a.txt']);
    expect(ofType(rt.log.events(), 'agent/request-error')).toMatchObject([{ stepIndex: 0, kind: 'retryable', action: 'retry' }]);
  });

  it('a fatal in-stream error (invalid_request_error) fails the turn with its message', async () => {
    server.reply(anthropicReply({ blocks: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], errorAfterBlocks: { after: 1, type: 'invalid_request_error', message: 'bad request' } }));
    const { rt } = wireRuntime();
    const result = await rt.startTurn({ model: await model(), input: 'x', callOptions: { maxOutputTokens: 100 } }).done;
    expect(result.outcome).toBe('failed');
    expect(result.error).toMatch(/^model request failed \(fatal\): bad request \(invalid_request_error\)/);
  });
});
