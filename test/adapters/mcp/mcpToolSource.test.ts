// The MCP tool source against real MCP servers (the SDK's McpServer, fixtures/fixtureServer.mjs),
// over stdio and over Streamable HTTP on loopback: results and codes, cancels that reach the
// server, timeouts, a server dying mid-call, same-named tools on two servers, servers that never start.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { attachMcpServers, type McpServers } from '../../../src/adapters/mcp/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { timeout } from '../../../src/runtime/wrappers/timeout.js';
import { eventually, isAlive, recordFile, startHttpFixture, stdioConfig } from './fixtures/fixtureProcess.js';

// Real processes on a loaded machine: a bound that only catches hangs.
vi.setConfig({ testTimeout: 90_000 });

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function runtimeWith(servers: McpServers) {
  const rt = createRuntime();
  const source = await attachMcpServers(rt, servers);
  cleanups.push(() => rt.close());
  return { rt, source };
}

let n = 0;
const call = (rt: ReturnType<typeof createRuntime>, toolName: string, input: unknown = {}) => rt.runCall({ callId: `c${++n}`, toolName, input });
const warnings = (rt: ReturnType<typeof createRuntime>) => rt.log.events().flatMap((e) => (e.type === 'warning' ? [e] : []));

type Transport = 'stdio' | 'http';
async function fixture(transport: Transport, env: Record<string, string> = {}) {
  const record = recordFile();
  if (transport === 'stdio') return { record, config: stdioConfig(record.path, { env }) };
  const http = await startHttpFixture(record.path, env);
  cleanups.push(http.stop);
  return { record, config: { url: http.url } };
}

describe.each<Transport>(['stdio', 'http'])('MCP tools over %s', (transport) => {
  it('registers every tool as server__tool with the server description and maps results and codes', async () => {
    const { config } = await fixture(transport);
    const { rt } = await runtimeWith({ fx: config });
    const names = rt.tools.list().map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['fx__fast', 'fx__slow', 'fx__fail', 'fx__add', 'fx__picture']));
    expect(rt.tools.list().find((t) => t.name === 'fx__fast')?.description).toBe('Echoes its text at once.');

    const fast = await call(rt, 'fx__fast', '{"text":"hi"}').result;
    expect(fast).toMatchObject({ isError: false, content: 'echo: hi', value: 'echo: hi' });

    const failed = await call(rt, 'fx__fail').result;
    expect(failed.isError).toBe(true);
    expect(failed.error?.code).toBe('TOOL_FAILED');
    expect(failed.content).toBe('disk on fire\nsecond line');
    expect(failed.error?.message).toContain('disk on fire');

    const add = await call(rt, 'fx__add', { a: 2, b: 3 }).result;
    expect(add).toMatchObject({ isError: false, value: { sum: 5 }, content: '{"sum":5}' });
    expect(add.parts).toBeUndefined();

    const picture = await call(rt, 'fx__picture').result;
    expect(picture.isError).toBe(false);
    expect(picture.content).toBe('a red pixel');
    expect(picture.parts).toEqual([
      { type: 'image', data: expect.stringMatching(/^iVBOR/), mediaType: 'image/png' },
      { type: 'resource', uri: 'file:///notes.txt', mediaType: 'text/plain', text: 'some notes' },
    ]);
    // The log keeps the typed parts as they are (never stringified into the content).
    const logged = rt.log.events().find((e) => e.type === 'tool/result' && e.result.toolName === 'fx__picture');
    expect(logged?.type === 'tool/result' && logged.result.parts?.[0]?.type).toBe('image');
  });

  it('checks input against the JSON Schema before pre-execute: INVALID_ARGS with the schema error', async () => {
    const { config } = await fixture(transport);
    const { rt } = await runtimeWith({ fx: config });
    const seen: string[] = [];
    rt.hooks.on('tools/pre-execute', 'watch', (c, next) => (seen.push(c.callId), next()));
    const bad = await call(rt, 'fx__add', { a: 'two', b: 3 }).result;
    expect(bad.error?.code).toBe('INVALID_ARGS');
    expect(bad.error?.message).toMatch(/JSON Schema: .*a must be number/);
    const missing = await call(rt, 'fx__fast', {}).result;
    expect(missing.error?.code).toBe('INVALID_ARGS');
    expect(missing.error?.message).toContain("must have required property 'text'");
    expect(seen).toEqual([]);
  });

  it('an abort cancels the request on the server; the result is ABORTED', async () => {
    const { config, record } = await fixture(transport);
    const { rt } = await runtimeWith({ fx: config });
    const handle = call(rt, 'fx__slow', { tag: 'abort' });
    await eventually(() => record.entries().some((e) => e.event === 'started' && e.tag === 'abort'), 'the slow tool to start');
    handle.cancel('user pressed stop');
    const r = await handle.result;
    expect(r.error?.code).toBe('ABORTED');
    await eventually(() => record.entries().some((e) => e.event === 'cancelled' && e.tag === 'abort'), 'the server to record the cancel');
  });

  it("the pipeline's timeout gives TIMEOUT and cancels the request on the server too", async () => {
    const { config, record } = await fixture(transport);
    const { rt } = await runtimeWith({ fx: config });
    rt.hooks.on('tools/execute', 'timeout', timeout({ ms: (c) => (c.toolName === 'fx__slow' ? 300 : undefined) }));
    const r = await call(rt, 'fx__slow', { tag: 'timeout' }).result;
    expect(r.error?.code).toBe('TIMEOUT');
    await eventually(() => record.entries().some((e) => e.event === 'cancelled' && e.tag === 'timeout'), 'the server to record the cancel');
  });

  it("the server's own call limit gives TIMEOUT and cancels on the server", async () => {
    const { config, record } = await fixture(transport);
    const { rt } = await runtimeWith({ fx: { ...config, callTimeoutMs: 300 } });
    const r = await call(rt, 'fx__slow', { tag: 'limit' }).result;
    expect(r.error?.code).toBe('TIMEOUT');
    expect(r.error?.message).toContain('did not answer within 300 ms');
    await eventually(() => record.entries().some((e) => e.event === 'cancelled' && e.tag === 'limit'), 'the server to record the cancel');
  });

  it('two servers with a same-named tool do not collide', async () => {
    const a = await fixture(transport, { FIXTURE_TOOL_SUFFIX: ' (from a)' });
    const b = await fixture(transport, { FIXTURE_TOOL_SUFFIX: ' (from b)' });
    const { rt } = await runtimeWith({ a: a.config, b: b.config });
    expect((await call(rt, 'a__fast', { text: 'x' }).result).content).toBe('echo: x (from a)');
    expect((await call(rt, 'b__fast', { text: 'x' }).result).content).toBe('echo: x (from b)');
    expect(warnings(rt)).toEqual([]);
  });

  it('is closed with the runtime: later calls fail with TOOL_FAILED, not a hang', async () => {
    const { config, record } = await fixture(transport);
    const { rt, source } = await runtimeWith({ fx: config });
    await rt.close();
    if (transport === 'stdio') {
      const pid = record.entries().find((e) => e.event === 'pid')?.pid;
      expect(pid).toBeTypeOf('number');
      await eventually(() => !isAlive(pid!), 'the stdio server process to stop');
    }
    expect(source.connections.get('fx')?.closedReason()).toBe('the connection was closed');
    const r = await call(rt, 'fx__fast', { text: 'late' }).result;
    expect(r.error?.code).toBe('TOOL_FAILED');
    expect(r.error?.message).toContain('MCP server "fx" is not connected');
  });
});

describe('MCP server failures (Streamable HTTP)', () => {
  it('a server that dies mid-call fails that call with TOOL_FAILED and the reason, long before the call limit', async () => {
    const { config } = await fixture('http');
    const { rt, source } = await runtimeWith({ fx: { ...config, callTimeoutMs: 600_000 } });
    const r = await call(rt, 'fx__die').result;
    expect(r.error?.code).toBe('TOOL_FAILED');
    expect(r.error?.message).toContain("the server's answer stream was cut before the answer");
    // The cut makes dsh ping the server: it is gone, so the connection is closed and later calls fail fast.
    await eventually(() => source.connections.get('fx')?.closedReason()?.includes('the server stopped answering') === true, 'the connection to be closed');
    const after = await call(rt, 'fx__fast', { text: 'x' }).result;
    expect(after.error?.code).toBe('TOOL_FAILED');
    expect(after.error?.message).toContain('not connected: the server stopped answering');
  });
});

describe('MCP server failures (stdio)', () => {
  it('a server that exits mid-call fails that call with TOOL_FAILED and the reason; later calls fail fast', async () => {
    const { config } = await fixture('stdio');
    const { rt } = await runtimeWith({ fx: config });
    const r = await call(rt, 'fx__die').result;
    expect(r.error?.code).toBe('TOOL_FAILED');
    expect(r.error?.message).toContain('the server process exited');
    expect(r.error?.message).toContain('dying on purpose');
    const after = await call(rt, 'fx__fast', { text: 'x' }).result;
    expect(after.error?.code).toBe('TOOL_FAILED');
    expect(after.error?.message).toContain('not connected');
  });

  it('a server that answers garbage fails the pending call with TOOL_FAILED, never hangs', async () => {
    const { config } = await fixture('stdio');
    const { rt } = await runtimeWith({ fx: config });
    const r = await call(rt, 'fx__garbage').result;
    expect(r.error?.code).toBe('TOOL_FAILED');
    expect(r.error?.message).toContain('malformed data');
  });

  it('a server that never starts is reported and skipped after its limit; one that cannot start too; the others work', async () => {
    const { config } = await fixture('stdio');
    const { rt, source } = await runtimeWith({
      silent: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], startupTimeoutMs: 1500 },
      missing: { command: '/nonexistent/mcp-server-binary' },
      crashing: { command: process.execPath, args: ['-e', 'console.error("no config file"); process.exit(2)'] },
      fx: config,
    });
    expect([...source.connections.keys()]).toEqual(['fx']);
    const skipped = warnings(rt).filter((w) => w.code === 'MCP_SERVER_SKIPPED');
    expect(skipped.map((w) => w.data?.server).sort()).toEqual(['crashing', 'missing', 'silent']);
    expect(skipped.find((w) => w.data?.server === 'silent')?.message).toContain('did not start within 1500 ms');
    expect(skipped.find((w) => w.data?.server === 'missing')?.message).toContain('failed to start');
    expect(skipped.find((w) => w.data?.server === 'crashing')?.message).toContain('no config file');
    expect((await call(rt, 'fx__fast', { text: 'still here' }).result).content).toBe('echo: still here');
  });

  it('concurrency: exclusive by default, annotations ignored unless trusted, config keys make tools safe', async () => {
    const modes = async (servers: McpServers) => {
      const { rt } = await runtimeWith(servers);
      const out: Record<string, string> = {};
      for (const name of ['fx__fast', 'fx__peek', 'fx__add']) {
        await call(rt, name, name === 'fx__fast' ? { text: 'a' } : name === 'fx__add' ? { a: 1, b: 1 } : {}).result;
        const ev = rt.log.events().filter((e) => e.type === 'tool/call' && e.toolName === name).at(-1);
        out[name] = ev?.type === 'tool/call' ? ev.executionMode : '?';
      }
      return out;
    };
    const record = recordFile();
    expect(await modes({ fx: stdioConfig(record.path) })).toEqual({ fx__fast: 'exclusive', fx__peek: 'exclusive', fx__add: 'exclusive' });
    expect(await modes({ fx: stdioConfig(record.path, { trustReadOnlyHint: true }) })).toEqual({ fx__fast: 'exclusive', fx__peek: 'parallel', fx__add: 'exclusive' });
    expect(await modes({ fx: stdioConfig(record.path, { concurrencySafe: ['add'] }) })).toEqual({ fx__fast: 'exclusive', fx__peek: 'exclusive', fx__add: 'parallel' });
    expect(await modes({ fx: stdioConfig(record.path, { concurrencySafe: true }) })).toEqual({ fx__fast: 'parallel', fx__peek: 'parallel', fx__add: 'parallel' });
  });

  it('passes server progress to exec.progress when the pipeline offers one (the seam; none is requested otherwise)', async () => {
    const { config, record } = await fixture('stdio');
    const { source } = await runtimeWith({ fx: config });
    const slow = source.tools().find((t) => t.name === 'fx__slow')!;
    const progress: unknown[] = [];
    const exec = { signal: new AbortController().signal, progress: (p: unknown) => void progress.push(p) };
    const out = await slow.execute({ ms: 50, tag: 'progress' }, exec as never);
    expect(out.content).toBe('slow done');
    expect(progress).toEqual([{ progress: 1, total: 2, message: 'half way' }]);
    // Without a sink no progress token is sent, so the server sends none.
    await slow.execute({ ms: 50, tag: 'quiet' }, { signal: new AbortController().signal } as never);
    expect(record.entries().filter((e) => e.event === 'started').map((e) => [e.tag, e.progressRequested])).toEqual([
      ['progress', true],
      ['quiet', false],
    ]);
  });

  it('listChanged refreshes the registry (applied at once when no turn runs)', async () => {
    const { config } = await fixture('stdio');
    const { rt } = await runtimeWith({ fx: config });
    expect(rt.tools.list().some((t) => t.name === 'fx__extra')).toBe(false);
    await call(rt, 'fx__grow').result;
    await eventually(() => rt.tools.list().some((t) => t.name === 'fx__extra'), 'fx__extra to be registered');
    expect((await call(rt, 'fx__extra').result).content).toBe('extra here');
    expect(rt.tools.list().filter((t) => t.name === 'fx__fast')).toHaveLength(1);
  });

  it('refuses hostile schemas tool by tool, with the reason, and keeps the ordinary tools', async () => {
    const { HOSTILE } = await import('./fixtures/fixtureProcess.js');
    const { rt } = await runtimeWith({ bad: { command: process.execPath, args: [HOSTILE] } });
    const skipped = Object.fromEntries(warnings(rt).filter((w) => w.code === 'MCP_TOOL_SKIPPED').map((w) => [w.data?.tool, w.message]));
    expect(Object.keys(skipped).sort()).toEqual(['badOutput', 'big', 'deep', 'exponential', 'lookahead', 'remote']);
    expect(skipped.exponential).toContain('expands to over 100000 nodes through its $refs');
    expect(skipped.deep).toContain('nested deeper than 32 levels');
    expect(skipped.big).toMatch(/characters, over the limit/);
    expect(skipped.lookahead).toContain('does not compile');
    expect(skipped.remote).toContain('is not a local JSON pointer');
    expect(skipped.badOutput).toContain('output schema was refused');
    // A catastrophic-backtracking pattern runs on RE2: a hostile input is refused, not a hung process.
    const r = await call(rt, 'bad__redos', { s: `${'a'.repeat(50_000)}!` }).result;
    expect(r.error?.code).toBe('INVALID_ARGS');
    expect((await call(rt, 'bad__redos', { s: 'aaa' }).result).content).toBe('ran redos');
    // A recursive schema (a tree) is fine: recursion is bounded by the value.
    expect((await call(rt, 'bad__tree', { value: 1, children: [{ value: 2, children: [] }] }).result).content).toBe('ran tree');
    expect((await call(rt, 'bad__tree', { value: 1, children: [{ value: 'x' }] }).result).error?.code).toBe('INVALID_ARGS');
  });
});

