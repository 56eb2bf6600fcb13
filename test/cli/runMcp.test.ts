// `dsh run` and `dsh mcp list` with "mcpServers" in the user's config: real dsh processes from
// source, the fixture MCP server over stdio (test/adapters/mcp/fixtures/fixtureServer.mjs). The
// servers are the user file's (trusted as they are); a project file's start only once trusted
// (issue 31 item 4: test/cli/projectServers.test.ts).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { eventually, isAlive, recordFile, stdioConfig } from '../adapters/mcp/fixtures/fixtureProcess.js';
import { dsh, testEnv } from './spawnDsh.js';

const HANG = 120_000;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function workspace(config: unknown, script?: unknown[], where: 'user' | 'project' = 'user'): { dir: string; env: NodeJS.ProcessEnv; script: string } {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-runmcp-'));
  const xdg = mkdtempSync(join(tmpdir(), 'dsh-runmcp-xdg-'));
  dirs.push(dir, xdg);
  writeFileSync(join(dir, 'README.md'), '# app\n');
  if (where === 'user') mkdirSync(join(xdg, 'dsh'));
  writeFileSync(where === 'user' ? join(xdg, 'dsh', 'config.json') : join(dir, 'dsh.config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  const file = join(dir, 'script.json');
  if (script) writeFileSync(file, JSON.stringify(script));
  return { dir, env: testEnv({ XDG_CONFIG_HOME: xdg }), script: file };
}

async function eventsOf(dir: string): Promise<LogEvent[]> {
  const [name] = readdirSync(join(dir, '.dsh', 'sessions')).filter((n) => n.endsWith('.jsonl'));
  expect(name).toBeDefined();
  return (await readJsonlLog(join(dir, '.dsh', 'sessions', name!))).events;
}

const results = (events: readonly LogEvent[]) => events.filter((e): e is Extract<LogEvent, { type: 'tool/result' }> => e.type === 'tool/result');
const calls = (events: readonly LogEvent[]) => events.filter((e): e is Extract<LogEvent, { type: 'tool/call' }> => e.type === 'tool/call');

describe('dsh run with "mcpServers"', () => {
  it('an MCP tool and a built-in tool in one batch: both results in call order; the server is stopped after the run', async () => {
    const record = recordFile();
    const { dir, env, script } = workspace({ mcpServers: { fx: stdioConfig(record.path) } }, [
      {
        toolCalls: [
          { toolName: 'fx__fast', input: { text: 'hello' } },
          { toolName: 'read', input: { path: 'README.md' } },
        ],
      },
      { text: 'done' },
    ]);
    const r = await dsh(dir, ['run', 'go', '--model', `scripted:${script}`], env);
    expect(r.code, r.err).toBe(0);
    const events = await eventsOf(dir);
    expect(calls(events).map((c) => c.toolName)).toEqual(['fx__fast', 'read']);
    const rs = results(events);
    expect(rs.map((e) => e.toolName)).toEqual(['fx__fast', 'read']);
    expect(rs.every((e) => !e.result.isError)).toBe(true);
    expect(JSON.stringify(rs[0]!.result)).toContain('echo: hello');
    expect(JSON.stringify(rs[1]!.result)).toContain('# app');
    const pid = record.entries().find((e) => e.event === 'pid')?.pid;
    expect(pid).toBeTypeOf('number');
    await eventually(() => !isAlive(pid!), 'the MCP server process to be gone');
  }, HANG);

  it('dsh resume attaches them too, and stops the server after the turn', async () => {
    const record = recordFile();
    const { dir, env, script } = workspace({ mcpServers: { fx: stdioConfig(record.path) } }, [{ toolCalls: [{ toolName: 'fx__fast', input: { text: 'again' } }] }, { text: 'done' }]);
    const first = join(dir, 'first.json');
    writeFileSync(first, JSON.stringify([{ text: 'hi' }]));
    expect((await dsh(dir, ['run', 'go', '--model', `scripted:${first}`], env)).code).toBe(0);
    const [name] = readdirSync(join(dir, '.dsh', 'sessions')).filter((n) => n.endsWith('.jsonl'));
    const r = await dsh(dir, ['resume', name!.slice(0, -6), 'again', '--model', `scripted:${script}`], env);
    expect(r.code, r.err).toBe(0);
    const rs = results(await eventsOf(dir));
    expect(rs.map((e) => e.toolName)).toEqual(['fx__fast']);
    expect(JSON.stringify(rs[0]!.result)).toContain('echo: again');
    const pids = record.entries().filter((e) => e.event === 'pid').map((e) => e.pid!);
    expect(pids).toHaveLength(2);
    await eventually(() => pids.every((p) => !isAlive(p)), 'the MCP server processes to be gone');
  }, HANG);

  it('MCP tools go through the policies: plan mode denies them; a permission rule names server__tool', async () => {
    const record = recordFile();
    const script = [{ toolCalls: [{ toolName: 'fx__peek', input: {} }, { toolName: 'fx__fast', input: { text: 'x' } }] }, { text: 'done' }];
    const plan = workspace({ plan: true, mcpServers: { fx: stdioConfig(record.path) } }, script);
    expect((await dsh(plan.dir, ['run', 'go', '--model', `scripted:${plan.script}`], plan.env)).code).toBe(0);
    expect(results(await eventsOf(plan.dir)).map((e) => e.result.error?.code)).toEqual(['POLICY_DENIED', 'POLICY_DENIED']);

    const rule = workspace({ permissions: [{ tool: 'fx__f*', decision: 'deny' }], mcpServers: { fx: stdioConfig(record.path) } }, script);
    expect((await dsh(rule.dir, ['run', 'go', '--model', `scripted:${rule.script}`], rule.env)).code).toBe(0);
    expect(results(await eventsOf(rule.dir)).map((e) => [e.toolName, e.result.error?.code ?? 'ok'])).toEqual([
      ['fx__peek', 'ok'],
      ['fx__fast', 'POLICY_DENIED'],
    ]);
  }, HANG);

  it('a server that cannot start: one line on stderr, a warning in the log, and the run completes', async () => {
    const { dir, env, script } = workspace({ mcpServers: { gone: { command: '/nonexistent/mcp-server' } } }, [
      { toolCalls: [{ toolName: 'read', input: { path: 'README.md' } }] },
      { text: 'done' },
    ]);
    const r = await dsh(dir, ['run', 'go', '--model', `scripted:${script}`], env);
    expect(r.code, r.err).toBe(0);
    const lines = r.err.split('\n').filter((l) => l.includes('MCP server "gone" skipped'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^dsh: MCP server "gone" skipped: failed to start/);
    const events = await eventsOf(dir);
    expect(events.some((e) => e.type === 'warning' && e.code === 'MCP_SERVER_SKIPPED')).toBe(true);
    expect(results(events).map((e) => [e.toolName, e.result.isError])).toEqual([['read', false]]);
    expect(events.some((e) => e.type === 'turn/end')).toBe(true);
  }, HANG);
});

describe('dsh mcp list', () => {
  it('prints the servers of the config with their tools, parallel only when trusted', async () => {
    const record = recordFile();
    const { dir, env } = workspace({ mcpServers: { fx: stdioConfig(record.path, { trustReadOnlyHint: true }) } });
    const r = await dsh(dir, ['mcp', 'list'], env);
    expect(r.code, r.err).toBe(0);
    const out = r.out.split('\n');
    expect(out).toContain('fx: 13 tool(s)');
    expect(out).toContain('  fx__fast  [exclusive]  Echoes its text at once.');
    expect(out).toContain('  fx__peek  [parallel]  Claims to be read-only.');
    const pid = record.entries().find((e) => e.event === 'pid')?.pid;
    await eventually(() => pid !== undefined && !isAlive(pid), 'the MCP server process to be gone');
  }, HANG);

  it('a bad config is one line, exit 1; --help names the command', async () => {
    const { dir, env } = workspace({ mcpServers: { fx: { args: ['x'] } } }, undefined, 'project');
    const r = await dsh(dir, ['mcp', 'list'], env);
    expect(r.code).toBe(1);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^dsh mcp: .*dsh\.config\.json/);
    const help = await dsh(dir, ['--help'], env);
    expect(help.out).toContain('dsh mcp list');
  }, HANG);
});
