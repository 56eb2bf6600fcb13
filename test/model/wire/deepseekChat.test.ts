/**
 * `deepseek:MODEL` (issue 32 item 9): the real `@ai-sdk/deepseek` package against a loopback server
 * speaking DeepSeek's API (OpenAI-style Chat Completions streaming at `/chat/completions`): the key
 * from DEEPSEEK_API_KEY as a bearer token, the model id, the tools, two parallel calls whose results
 * are committed in the model's order, and the answer after them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveModel } from '../../../src/adapters/model/providers.js';
import { LogEventSchema } from '../../../src/protocol/index.js';
import { startLoopbackServer, type LoopbackServer } from './loopbackServer.js';
import { openAiChatReply } from './openaiChat.js';
import { ofType, wireRuntime } from './harness.js';

let server: LoopbackServer;
beforeEach(async () => {
  server = await startLoopbackServer();
});
afterEach(async () => {
  await server.close();
});

describe('DeepSeek over the wire', () => {
  it('a turn with two parallel calls completes; the request carries the key, the model and the tools', async () => {
    server.reply(
      openAiChatReply({
        text: ['Reading both.'],
        toolCalls: [
          { id: 'call_a', name: 'read', arguments: '{"path":"a.txt"}' },
          { id: 'call_b', name: 'read', arguments: '{"path":"b.txt"}' },
        ],
        usage: { prompt_tokens: 40, completion_tokens: 10 },
      }),
      openAiChatReply({ text: ['Both ', 'read.'], usage: { prompt_tokens: 60, completion_tokens: 3 } }),
    );
    const model = await resolveModel('deepseek:deepseek-chat', { baseUrl: server.url, env: { DEEPSEEK_API_KEY: 'sk-deepseek-test' } });
    expect([model.specificationVersion, model.modelId]).toEqual(['v3', 'deepseek-chat']);
    const { rt } = wireRuntime();
    const result = await rt.startTurn({ model, input: 'read a and b' }).done;
    expect(result).toMatchObject({ outcome: 'completed', steps: 2, text: 'Both read.' });
    const events = rt.log.events();
    for (const e of events) LogEventSchema.parse(e);
    expect(ofType(events, 'tool/result').map((e) => [e.callId, e.result.content])).toEqual([
      ['call_a', 'contents of a.txt'],
      ['call_b', 'contents of b.txt'],
    ]);
    const [first, second] = server.requests;
    expect(first!.url).toBe('/chat/completions');
    expect(first!.headers.authorization).toBe('Bearer sk-deepseek-test');
    const body = first!.body as { model: string; stream: boolean; tools: Array<{ function: { name: string } }> };
    expect(body.model).toBe('deepseek-chat');
    expect(body.stream).toBe(true);
    expect(body.tools.map((t) => t.function.name)).toEqual(['read']);
    const toolMessages = (second!.body as { messages: Array<{ role: string; tool_call_id?: string }> }).messages.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => m.tool_call_id)).toEqual(['call_a', 'call_b']);
  });

  it('without DEEPSEEK_API_KEY: one line naming it', async () => {
    await expect(resolveModel('deepseek:deepseek-chat', { env: {} })).rejects.toMatchObject({ code: 'MISSING_API_KEY', message: 'deepseek needs an API key: set DEEPSEEK_API_KEY in the environment' });
  });
});
