// A turn with the scripted model that calls MCP tools (a real McpServer over stdio) and a built-in
// tool in one batch: every result is committed in call order, and the next request's prompt
// carries the image as a typed part of the tool result.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { attachMcpServers } from '../../../src/adapters/mcp/index.js';
import { scriptedModel } from '../../../src/adapters/model/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { recordFile, stdioConfig } from './fixtures/fixtureProcess.js';

vi.setConfig({ testTimeout: 90_000 });
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('a turn with MCP tools', () => {
  it('runs MCP tools and a built-in tool in one batch and commits all results in call order', async () => {
    const note = defineTool({ name: 'note', input: z.object({ text: z.string() }), isConcurrencySafe: () => true, execute: ({ text }) => `noted ${text}` });
    const rt = createRuntime({ tools: [note] });
    cleanups.push(() => rt.close());
    const record = recordFile();
    await attachMcpServers(rt, { fx: stdioConfig(record.path, { concurrencySafe: ['fast', 'picture'] }) });
    const batch = [
      { toolName: 'fx__fast', input: { text: 'one' } },
      { toolName: 'note', input: { text: 'two' } },
      { toolName: 'fx__add', input: { a: 1, b: 2 } },
      { toolName: 'fx__picture', input: {} },
      { toolName: 'fx__fail', input: {} },
      { toolName: 'fx__fast', input: { text: 'six' } },
    ];
    const model = scriptedModel([{ toolCalls: batch }, { text: 'all done' }]);
    const { outcome } = await rt.startTurn({ model, input: 'use the tools' }).done;
    expect(outcome).toBe('completed');

    const events = rt.log.events();
    const calls = events.flatMap((e) => (e.type === 'tool/call' ? [e] : []));
    const results = events.flatMap((e) => (e.type === 'tool/result' ? [e] : []));
    expect(calls.map((c) => c.toolName)).toEqual(batch.map((b) => b.toolName));
    expect(results.map((r) => r.callId)).toEqual(calls.map((c) => c.callId));
    expect(results.map((r) => (r.result.isError ? r.result.error?.code : r.result.content))).toEqual([
      'echo: one',
      'noted two',
      '{"sum":3}',
      'a red pixel',
      'TOOL_FAILED',
      'echo: six',
    ]);
    expect(calls.map((c) => c.executionMode)).toEqual(['parallel', 'parallel', 'exclusive', 'parallel', 'exclusive', 'parallel']);

    // The second request saw the MCP tools by their namespaced names and the results in call order.
    const second = model.calls[1]!;
    expect(model.calls[0]!.options.tools?.map((t) => t.name)).toEqual(expect.arrayContaining(['note', 'fx__fast', 'fx__picture']));
    const toolMessage = second.prompt.find((m) => m.role === 'tool');
    const outputs = toolMessage?.role === 'tool' ? toolMessage.content.flatMap((p) => (p.type === 'tool-result' ? [p.output] : [])) : [];
    expect(outputs.map((o) => o.type)).toEqual(['text', 'text', 'text', 'content', 'error-text', 'text']);
    expect(outputs[3]).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'a red pixel' },
        { type: 'image-data', data: expect.stringMatching(/^iVBOR/), mediaType: 'image/png' },
        { type: 'text', text: 'resource file:///notes.txt:\nsome notes' },
      ],
    });
    expect(outputs[4]).toEqual({ type: 'error-text', value: 'disk on fire\nsecond line' });
  });
  it('forwards the server\'s progress notifications as tool/progress events of the call, before its result (issue 15.1)', async () => {
    const rt = createRuntime();
    cleanups.push(() => rt.close());
    const record = recordFile();
    await attachMcpServers(rt, { fx: stdioConfig(record.path) });
    // The call runs until cancelled: the notification is in the log while it is still running
    // (a call that returned at once could race the SDK, which drops progress arriving with the response).
    const h = rt.runCall({ callId: 'p1', toolName: 'fx__slow', input: { tag: 'turn-progress' } });
    for (let i = 0; i < 600 && !rt.log.events().some((e) => e.type === 'tool/progress'); i++) await new Promise((r) => setTimeout(r, 50));
    h.cancel('seen enough');
    const r = await h.result;
    expect(r.error?.code).toBe('ABORTED');
    const events = rt.log.events().filter((e) => 'callId' in e && e.callId === 'p1');
    expect(events.map((e) => e.type)).toEqual(['tool/call', 'tool/progress', 'tool/result']);
    expect(events[1]).toMatchObject({ type: 'tool/progress', toolName: 'fx__slow', progress: 1, total: 2, message: 'half way', updates: 1 });
  });
});
