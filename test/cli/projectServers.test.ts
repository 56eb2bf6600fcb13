/**
 * Issue 31 item 4 (SPEC §10.7): a project's MCP servers are trusted before they start. With the
 * real CLI, without a terminal: a project config names a stdio server that writes a marker file.
 * Not trusted: no marker, one line saying how to trust it. `--trust-project-servers`: it starts,
 * in the sandbox (it cannot write outside the workspace). `dsh mcp trust`: remembered outside the
 * workspace, it starts without the flag; a changed command is not trusted again. On a terminal
 * (tmux): asked once, `y` starts it and remembers it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dsh, dshArgv, testEnv, waitFor } from './spawnDsh.js';

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const socket = `dsh-projsrv-${process.pid}`;
const dirs: string[] = [];
afterAll(() => {
  spawnSync('tmux', ['-L', socket, 'kill-server']);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function world() {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-projsrv-'));
  const xdg = mkdtempSync(join(tmpdir(), 'dsh-projsrv-xdg-'));
  const outside = mkdtempSync(join(tmpdir(), 'dsh-projsrv-out-'));
  dirs.push(dir, xdg, outside);
  mkdirSync(join(dir, '.git'));
  const script = join(xdg, 'script.json');
  writeFileSync(script, JSON.stringify([{ text: 'done' }]));
  const config = (marker: string) =>
    writeFileSync(join(dir, 'dsh.config.json'), JSON.stringify({ mcpServers: { probe: { command: 'sh', args: ['-c', `echo ran > ${marker}; echo ran > ${join(outside, 'escaped')}`] } } }));
  const run = (...extra: string[]) => dsh(dir, ['run', 'go', '--model', `scripted:${script}`, ...extra], testEnv({ XDG_CONFIG_HOME: xdg }));
  return { dir, xdg, outside, config, run, marker: (name: string) => existsSync(join(dir, name)) };
}

const NOT_TRUSTED = /^dsh: MCP server "probe" \(from dsh\.config\.json\) not started: its command is not trusted yet \(sh -c .*\); trust it with dsh mcp trust, or pass --trust-project-servers for one run$/m;

describe('project MCP servers start only once trusted', () => {
  it('not trusted: not started, one line; --trust-project-servers: started, in the sandbox', async () => {
    const w = world();
    w.config('marker');
    const r = await w.run();
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(NOT_TRUSTED);
    expect(r.err.split('\n').filter((l) => l.includes('"probe"'))).toHaveLength(1);
    expect(w.marker('marker')).toBe(false);
    const flagged = await w.run('--trust-project-servers');
    expect(flagged.code, flagged.err).toBe(0);
    expect(flagged.err).not.toMatch(NOT_TRUSTED);
    expect(readFileSync(join(w.dir, 'marker'), 'utf8')).toBe('ran\n');
    // The default sandbox (workspace-write): nothing written outside the workspace.
    expect(existsSync(join(w.outside, 'escaped'))).toBe(false);
    // The flag is for one run: nothing was remembered.
    rmSync(join(w.dir, 'marker'));
    expect((await w.run()).err).toMatch(NOT_TRUSTED);
    expect(w.marker('marker')).toBe(false);
  });

  it('dsh mcp trust remembers the exact command outside the workspace; a changed command is not trusted', async () => {
    const w = world();
    w.config('marker');
    const t = await dsh(w.dir, ['mcp', 'trust'], testEnv({ XDG_CONFIG_HOME: w.xdg }));
    expect(t.code, t.err).toBe(0);
    expect(t.out).toMatch(/^trusted MCP server probe \(from dsh\.config\.json\): sh -c 'echo ran > marker; .*' \(sandbox workspace-write, no network\)$/m);
    expect(existsSync(join(w.xdg, 'dsh', 'trusted-mcp-servers.json'))).toBe(true);
    const r = await w.run();
    expect(r.err).not.toMatch(NOT_TRUSTED);
    expect(w.marker('marker')).toBe(true);
    // The command changes (as a model or a pull would change it): asked again, so not started here.
    w.config('marker2');
    const changed = await w.run();
    expect(changed.err).toMatch(NOT_TRUSTED);
    expect(w.marker('marker2')).toBe(false);
  });
});

const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe.skipIf(!hasTmux)('project MCP servers on a terminal', () => {
  it('asks once with the exact command; y starts it and remembers it (the next run without a terminal starts it)', async () => {
    const w = world();
    w.config('marker');
    const script = join(w.xdg, 'script.json');
    const args = dshArgv('run', 'go', '--model', `scripted:${script}`);
    tmux('new-session', '-d', '-s', 'ask', '-x', '200', '-y', '50', '-c', w.dir, `env XDG_CONFIG_HOME=${q(w.xdg)} ${args.map(q).join(' ')}; echo "exit=$?"; sleep 600`);
    const shot = () => tmux('capture-pane', '-p', '-J', '-t', 'ask');
    const see = (re: RegExp, what: string) => waitFor(() => re.test(shot()) && shot(), what, 90_000);
    const screen = await see(/\? start MCP server probe \(from dsh\.config\.json\): sh -c 'echo ran > marker; [^\n]*\(sandbox workspace-write, no network\) \[y\/N\]/, 'the question');
    expect(screen).not.toMatch(/session log:/);
    expect(w.marker('marker')).toBe(false);
    tmux('send-keys', '-t', 'ask', 'y', 'Enter');
    await see(/exit=0/, 'the exit');
    expect(w.marker('marker')).toBe(true);
    tmux('kill-session', '-t', 'ask');
    rmSync(join(w.dir, 'marker'));
    const again = await w.run();
    expect(again.err).not.toMatch(NOT_TRUSTED);
    expect(w.marker('marker')).toBe(true);
  }, 180_000);
});
