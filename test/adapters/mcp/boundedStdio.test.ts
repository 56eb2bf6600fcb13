/**
 * Issue 31 item 9 (MCP part), with a real hostile stdio server (fixtures/stormServer.mjs, plain
 * JSON-RPC over stdio):
 * - a storm of 10,000 `tools/list_changed` (with progress and log notifications) is coalesced: the
 *   server is asked `tools/list` at most 3 times in all, and no turn of the event loop is handed
 *   more than MESSAGES_PER_TICK messages;
 * - a 40 MiB line fails that call at once with the limit named (not at its time limit), the
 *   server process is gone, and the next call starts it again (at most MAX_RESTARTS times);
 * - `close()` leaves no process: neither the server (which ignores SIGTERM) nor its child.
 * Counts, never durations, are asserted (the test bound only catches a hang).
 */
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { attachMcpServers, type McpServers } from '../../../src/adapters/mcp/index.js';
import { BoundedStdioTransport, LineSplitter, MESSAGES_PER_TICK, MessageTooLargeError } from '../../../src/adapters/mcp/boundedStdio.js';
import { MAX_RESTARTS } from '../../../src/adapters/mcp/restartingConnection.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { eventually } from './fixtures/fixtureProcess.js';

vi.setConfig({ testTimeout: 90_000 });

const STORM = fileURLToPath(new URL('./fixtures/stormServer.mjs', import.meta.url));
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Running (a zombie waiting for its reaper is not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function stormServer(extra: Record<string, unknown> = {}) {
  const pids = join(mkdtempSync(join(tmpdir(), 'dsh-storm-')), 'pids.json');
  const servers: McpServers = { s: { command: process.execPath, args: [STORM], env: { STORM_PIDS: pids }, ...extra } };
  return { servers, pids: () => (existsSync(pids) ? (JSON.parse(readFileSync(pids, 'utf8')) as { server: number; child: number }) : undefined) };
}

async function runtimeWith(servers: McpServers) {
  const rt = createRuntime();
  const source = await attachMcpServers(rt, servers);
  cleanups.push(() => rt.close());
  return { rt, source };
}

let n = 0;
const call = (rt: ReturnType<typeof createRuntime>, toolName: string) => rt.runCall({ callId: `b${++n}`, toolName, input: {} }).result;

describe('a hostile stdio MCP server', () => {
  it('10,000 list_changed with progress and log notifications: at most 3 tools/list in all; the calls go on', async () => {
    const { servers } = stormServer();
    const { rt } = await runtimeWith(servers);
    const stormed = await call(rt, 's__storm');
    expect(stormed.isError, stormed.content).toBe(false);
    expect(stormed.content).toBe('stormed');
    // Whatever refresh the storm queued has settled once a later call is answered after it.
    const count = await call(rt, 's__count');
    expect(count.isError).toBe(false);
    expect(Number(count.content)).toBeGreaterThanOrEqual(1);
    expect(Number(count.content)).toBeLessThanOrEqual(3);
    expect((await call(rt, 's__ok')).content).toBe('ok');
  });

  it('the transport hands on at most MESSAGES_PER_TICK messages in one run of the event loop (30,002 in all)', async () => {
    const t = new BoundedStdioTransport({ command: process.execPath, args: [STORM], env: { PATH: process.env.PATH ?? '' }, maxMessageBytes: 1024 * 1024 });
    cleanups.push(() => t.close());
    let inTick = 0;
    let most = 0;
    let total = 0;
    let answered = false;
    t.onmessage = (m) => {
      // Microtasks run as soon as the current callback returns: this counts one synchronous run.
      if (inTick === 0) queueMicrotask(() => (inTick = 0));
      inTick++;
      total++;
      most = Math.max(most, inTick);
      if ('id' in m && m.id === 2) answered = true;
    };
    await t.start();
    await t.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
    await t.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'storm', arguments: {}, _meta: { progressToken: 7 } } });
    await eventually(() => answered, 'the storm call to be answered');
    expect(total).toBe(2 + 30_000);
    expect(most).toBeLessThanOrEqual(MESSAGES_PER_TICK);
  });

  it('a 40 MiB line fails that call with the limit named and stops the server; the next call starts it again (at most MAX_RESTARTS times)', async () => {
    const { servers, pids } = stormServer({ maxMessageBytes: 1024 * 1024, callTimeoutMs: 600_000 });
    const { rt, source } = await runtimeWith(servers);
    const huge = await call(rt, 's__huge');
    expect(huge.error?.code).toBe('TOOL_FAILED');
    expect(huge.error?.message).toContain('a message over 1048576 bytes');
    expect(source.connections.get('s')?.closedReason()).toContain('over 1048576 bytes');
    const { server, child } = pids()!;
    await eventually(() => !running(server) && !running(child), 'the server and its child to be gone');
    // Recovered: a new server process answers.
    const next = await call(rt, 's__ok');
    expect(next.isError, next.content).toBe(false);
    expect(next.content).toBe('ok');
    expect(pids()!.server).not.toBe(server);
    // Each over-limit line fails its call; past MAX_RESTARTS restarts, calls fail fast.
    for (let i = 1; i < MAX_RESTARTS; i++) {
      expect((await call(rt, 's__huge')).error?.message).toContain('a message over 1048576 bytes');
      expect((await call(rt, 's__ok')).content).toBe('ok');
    }
    expect((await call(rt, 's__huge')).error?.code).toBe('TOOL_FAILED');
    const last = await call(rt, 's__ok');
    expect(last.error?.code).toBe('TOOL_FAILED');
    expect(last.error?.message).toMatch(/is not connected: .*over 1048576 bytes/);
  });

  it('close() leaves no process: the server ignores SIGTERM and has a child; both are gone once close resolves', async () => {
    const { servers, pids } = stormServer();
    const rt = createRuntime();
    const source = await attachMcpServers(rt, servers);
    expect((await call(rt, 's__ok')).content).toBe('ok');
    const { server, child } = pids()!;
    expect(running(server) && running(child)).toBe(true);
    await source.close();
    expect(running(server)).toBe(false);
    // The child was killed with the group; it may wait a moment for its reaper.
    await eventually(() => !running(child), 'the child to be gone');
    await rt.close();
  });
});

describe('BoundedStdioTransport', () => {
  it('a program that cannot be spawned: start rejects, close resolves, onclose fires once', async () => {
    const t = new BoundedStdioTransport({ command: '/nonexistent/mcp-server', env: {}, maxMessageBytes: 100 });
    let closed = 0;
    t.onclose = () => closed++;
    t.onerror = () => {};
    await expect(t.start()).rejects.toThrow(/ENOENT/);
    await t.close();
    await t.close();
    expect(closed).toBe(1);
  });
});

describe('LineSplitter', () => {
  it('splits across chunks, drops a trailing CR, refuses a line over the bound and goes on after it', () => {
    const s = new LineSplitter(8);
    expect(s.push(Buffer.from('ab'))).toEqual([]);
    expect(s.push(Buffer.from('c\r\nde\nf'))).toEqual(['abc', 'de']);
    expect(() => s.push(Buffer.from('123456789'))).toThrow(MessageTooLargeError);
    expect(s.push(Buffer.from('\nok\n'))).toEqual(['', 'ok']);
  });
});
