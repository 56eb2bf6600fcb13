// What MCP allows a server to send after dsh stopped waiting (issue 25 item 8): an answer to a call
// that was cancelled or timed out, a progress notification for it, answers and progress for ids
// dsh never used. These are harmless: the connection stays, they are reported as bounded
// MCP_PROTOCOL_NOTICE warnings, and the next call works. A storm of tools/list_changed is
// coalesced into at most two re-reads of the tool list. Real corruption stays fatal (see the
// "answers garbage" test in mcpToolSource.test.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { attachMcpServers, MAX_NOTICES, type McpServerConfig } from '../../../src/adapters/mcp/index.js';
import { scriptedModel } from '../../../src/adapters/model/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { timeout } from '../../../src/runtime/wrappers/timeout.js';
import { eventually, recordFile, startHttpFixture, stdioConfig } from './fixtures/fixtureProcess.js';

vi.setConfig({ testTimeout: 120_000 });
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Transport = 'stdio' | 'http';
async function setup(transport: Transport, extra: Partial<McpServerConfig> = {}) {
  const record = recordFile();
  let config: McpServerConfig;
  if (transport === 'stdio') config = { ...stdioConfig(record.path), ...extra } as McpServerConfig;
  else {
    const http = await startHttpFixture(record.path);
    cleanups.push(http.stop);
    config = { url: http.url, ...extra } as McpServerConfig;
  }
  const rt = createRuntime();
  const source = await attachMcpServers(rt, { fx: config });
  cleanups.push(() => rt.close());
  return { rt, source, record };
}
let n = 0;
const call = (rt: ReturnType<typeof createRuntime>, toolName: string, input: unknown = {}) => rt.runCall({ callId: `l${++n}`, toolName, input });
const notices = (rt: ReturnType<typeof createRuntime>) => rt.log.events().flatMap((e) => (e.type === 'warning' && e.code === 'MCP_PROTOCOL_NOTICE' ? [e] : []));

const endings: Array<[string, (rt: ReturnType<typeof createRuntime>, tag: string, record: ReturnType<typeof recordFile>) => Promise<string | undefined>, Partial<McpServerConfig>]> = [
  [
    'a cancel (Ctrl-C)',
    async (rt, tag, record) => {
      const h = call(rt, 'fx__stubborn', { tag });
      await eventually(() => record.entries().some((e) => e.event === 'started' && e.tag === tag), 'the call to start');
      h.cancel('user pressed Ctrl-C');
      return (await h.result).error?.code;
    },
    {},
  ],
  [
    "the pipeline's timeout",
    async (rt, tag) => {
      rt.hooks.on('tools/execute', 'timeout', timeout({ ms: (c) => (c.toolName === 'fx__stubborn' ? 500 : undefined) }));
      return (await call(rt, 'fx__stubborn', { tag }).result).error?.code;
    },
    {},
  ],
  ["the server's call limit", async (rt, tag) => (await call(rt, 'fx__stubborn', { tag }).result).error?.code, { callTimeoutMs: 500 }],
];

describe.each<Transport>(['stdio', 'http'])('late answers over %s', (transport) => {
  it.each(endings)('after %s: the late answer and progress are notices, the server stays, the next call works', async (_, end, extra) => {
    const { rt, source, record } = await setup(transport, extra);
    const tag = `late-${n}`;
    const code = await end(rt, tag, record);
    expect(code === 'ABORTED' || code === 'TIMEOUT').toBe(true);
    await eventually(() => record.entries().some((e) => e.event === 'late-sent' && e.tag === tag), 'the server to send its late answer');
    await eventually(() => notices(rt).length > 0, 'the late message to be reported');
    expect(notices(rt)[0]?.message).toMatch(/unknown (message ID|token)/);
    expect(source.connections.get('fx')?.closedReason()).toBeUndefined();
    expect((await call(rt, 'fx__fast', { text: 'after' }).result).content).toBe('echo: after');
    expect((await call(rt, 'fx__add', { a: 2, b: 2 }).result).value).toEqual({ sum: 4 });
  });

  it('many stray answers and progress notifications: reported at most MAX_NOTICES times plus one, all counted', async () => {
    const { rt, source } = await setup(transport);
    const sent = await call(rt, 'fx__strays', { count: 200 }).result;
    expect(sent.content).toBe('sent 200');
    const strays = transport === 'stdio' ? 400 : 200; // over HTTP only the progress can go astray
    await eventually(() => (source.connections.get('fx')?.noticeCount() ?? 0) >= strays, 'every stray message to be seen');
    expect(notices(rt)).toHaveLength(MAX_NOTICES + 1);
    expect(notices(rt).at(-1)?.message).toContain('later ones are not reported');
    expect((await call(rt, 'fx__fast', { text: 'still' }).result).content).toBe('echo: still');
  });

  it('a storm of 10,000 tools/list_changed during a turn: a few re-reads (two over stdio), a registry change per read at most, no warning flood', async () => {
    const { rt, source } = await setup(transport);
    const connection = source.connections.get('fx')!;
    const listTools = vi.spyOn(connection, 'listTools');
    const unregister = vi.spyOn(rt.tools, 'unregister');
    const model = scriptedModel([{ toolCalls: [{ toolName: 'fx__storm', input: { count: 10_000 } }] }, { toolCalls: [{ toolName: 'fx__fast', input: { text: 'after the storm' } }] }, { text: 'done' }]);
    const { outcome } = await rt.startTurn({ model, input: 'storm' }).done;
    expect(outcome).toBe('completed');
    // Every notice reached the client before the storm's answer; wait for the re-reads to finish.
    await eventually(() => listTools.mock.results.length > 0 && listTools.mock.results.every((r) => r.type === 'return'), 'a re-read');
    await Promise.all(listTools.mock.results.map((r) => r.value));
    await new Promise((r) => setTimeout(r, 200));
    await Promise.all(listTools.mock.results.map((r) => r.value));
    // Over stdio the storm is one write, queued before the answer to the first re-read: exactly
    // one more read follows. Over HTTP the notices trickle in on the event stream while reads
    // run: each read coalesces all that came during it, so reads stay far below the notices.
    const reads = listTools.mock.calls.length;
    expect(reads).toBeGreaterThanOrEqual(1);
    if (transport === 'stdio') expect(reads).toBeLessThanOrEqual(2);
    else expect(reads).toBeLessThan(100);
    // The registry changed at most once per read (a newer list replaces one still waiting for its step).
    const fastRemovals = unregister.mock.calls.filter(([name]) => name === 'fx__fast').length;
    expect(fastRemovals).toBeLessThanOrEqual(reads);
    console.log(`tools/list_changed ×10,000 over ${transport}: ${reads} re-reads, ${fastRemovals} registry changes`);
    expect(rt.log.events().filter((e) => e.type === 'warning').length).toBeLessThan(100);
    const results = rt.log.events().flatMap((e) => (e.type === 'tool/result' ? [e.result.content] : []));
    expect(results).toEqual(['stormed 10000', 'echo: after the storm']);
  });
});
