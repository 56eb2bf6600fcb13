// An MCP stdio server run in dsh's OS sandbox (issue 23 item 4), per server in the config:
// "sandbox": "workspace-write" confines its writes to the workspace (the protected paths
// .dsh/ and dsh.config.json read-only), and the network is off unless "network": true. The server
// tries each escape itself (fixtureServer.mjs's "attempt" tool, real writes and a real connect).
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { attachMcpServers, type McpServerConfig } from '../../../src/adapters/mcp/index.js';
import { createSandbox } from '../../../src/adapters/sandbox/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { FIXTURE } from './fixtures/fixtureProcess.js';

vi.setConfig({ testTimeout: 90_000 });
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const root = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-mcp-sbx-')));
const can = await createSandbox({ mode: 'workspace-write', root }).check();

async function attempt(config: Partial<McpServerConfig>, input: { path?: string; port?: number }, workspace: string) {
  const rt = createRuntime();
  cleanups.push(() => rt.close());
  const source = await attachMcpServers(rt, { box: { command: process.execPath, args: [FIXTURE, 'stdio'], ...config } as McpServerConfig }, { workspaceRoot: workspace });
  expect(source.skipped).toEqual([]);
  const r = await rt.runCall({ callId: `a${Math.random()}`, toolName: 'box__attempt', input }).result;
  return r.content;
}

// The sandbox's /tmp is private (docs/sandbox.md): a checkout under the host's tmp dir (a clone in
// /tmp) hides the fixture server's own file from the sandboxed process, so these need the checkout
// elsewhere (CI clones outside /tmp).
const fixtureHidden = relative(realpathSync(tmpdir()), realpathSync(FIXTURE)).split(sep)[0] !== '..';

describe.skipIf(!can.ok || fixtureHidden)('an MCP stdio server in the sandbox', () => {
  it('workspace-write: writes in the workspace work; outside, .dsh/ and dsh.config.json are refused', async () => {
    const ws = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-mcp-ws-')));
    writeFileSync(join(ws, 'dsh.config.json'), '{"bash":{"deny":["^rm\\\\s"]}}\n');
    mkdirSync(join(ws, '.dsh'));
    // Outside the workspace but visible in the sandbox (the host's files are read-only there).
    const outside = mkdtempSync(join(process.cwd(), '.mcp-sbx-outside-'));
    cleanups.push(() => rmSync(outside, { recursive: true, force: true }));
    const box = { sandbox: 'workspace-write' as const };
    expect(await attempt(box, { path: join(ws, 'inside.txt') }, ws)).toBe('written');
    expect(readFileSync(join(ws, 'inside.txt'), 'utf8')).toBe('written by the MCP server\n');
    expect(await attempt(box, { path: join(outside, 'x.txt') }, ws)).toMatch(/^refused: (EROFS|EACCES|EPERM)/);
    expect(existsSync(join(outside, 'x.txt'))).toBe(false);
    expect(await attempt(box, { path: join(ws, 'dsh.config.json') }, ws)).toMatch(/^refused: /);
    expect(readFileSync(join(ws, 'dsh.config.json'), 'utf8')).toContain('deny');
    expect(await attempt(box, { path: join(ws, '.dsh', 'forged.jsonl') }, ws)).toMatch(/^refused: /);
    expect(existsSync(join(ws, '.dsh', 'forged.jsonl'))).toBe(false);
    // Without the sandbox the same server writes outside: the key is what confines it.
    expect(await attempt({}, { path: join(outside, 'y.txt') }, ws)).toBe('written');
  });

  it('the network is off unless the server opts in ("network": true)', async () => {
    const listener: Server = createServer((s) => s.destroy());
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => listener.close(r)));
    const port = (listener.address() as { port: number }).port;
    expect(await attempt({ sandbox: 'workspace-write' }, { port }, root)).toMatch(/^refused: /);
    expect(await attempt({ sandbox: 'workspace-write', network: true }, { port }, root)).toBe('connected');
  });

  it('a sandboxed server without a workspace root is skipped with the reason', async () => {
    const rt = createRuntime();
    cleanups.push(() => rt.close());
    const source = await attachMcpServers(rt, { box: { command: process.execPath, args: [FIXTURE, 'stdio'], sandbox: 'read-only' } });
    expect(source.skipped[0]?.reason).toContain('"sandbox" needs the workspace root');
  });
});
