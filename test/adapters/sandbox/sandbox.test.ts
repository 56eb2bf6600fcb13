// The sandbox adapter on its own: what each setting changes, run for real (SPEC §10.2).
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probeBwrap } from '../../../src/adapters/sandbox/bwrapProbe.js';
import { commandEnv, isBaseEnvName } from '../../../src/adapters/sandbox/commandEnv.js';
import { describeSandbox } from '../../../src/adapters/sandbox/sandbox.js';
import { createBuiltinTools } from '../../../src/adapters/tools/builtinTools.js';
import { ErrorCode } from '../../../src/protocol/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { call } from '../workspaceFixture.js';

const probe = await probeBwrap();
const skip = !probe.ok && process.env.CI === undefined;
if (skip) console.warn(`sandbox.test.ts: sandboxed runs skipped: no sandbox here (${probe.reason}); CI never skips them`);

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
/** Outside /tmp (the sandbox's /tmp is private), as a workspace under a home would be. */
async function workspace(): Promise<string> {
  const d = await mkdtemp(join('/var/tmp', 'dsh-sandbox-'));
  dirs.push(d);
  return d;
}

describe('commandEnv', () => {
  it('passes only the allowlist (and LC_*) plus the pass-through names; every other name is withheld, whatever it is called', () => {
    const env = {
      OPENAI_API_KEY: 'a', OTEL_EXPORTER_OTLP_HEADERS: 'x-key=s', SENTRY_DSN: 'https://k@s/1', HTTPS_PROXY: 'http://u:pw@p:1', REDIS_URL: 'redis://:pw@r', GH_PAT: 'g', DB_PW: 'd',
      NPM_TOKEN: 'n', PATH: '/bin', HOME: '/h', LANG: 'C', LC_ALL: 'C.UTF-8', TERM: 'xterm', TZ: 'UTC', NODE_OPTIONS: '--require x', PYENV_ROOT: '/opt/pyenv',
    };
    const r = commandEnv(env, { passThrough: ['NPM_TOKEN'], set: { TMPDIR: '/tmp' } });
    expect(r.env).toEqual({ NPM_TOKEN: 'n', PATH: '/bin', HOME: '/h', LANG: 'C', LC_ALL: 'C.UTF-8', TERM: 'xterm', TZ: 'UTC', PYENV_ROOT: '/opt/pyenv', TMPDIR: '/tmp' });
    expect(r.withheld).toEqual(['DB_PW', 'GH_PAT', 'HTTPS_PROXY', 'NODE_OPTIONS', 'OPENAI_API_KEY', 'OTEL_EXPORTER_OTLP_HEADERS', 'REDIS_URL', 'SENTRY_DSN']);
    expect(isBaseEnvName('LC_CTYPE')).toBe(true);
    expect(isBaseEnvName('SSH_AUTH_SOCK')).toBe(false);
  });
});

describe('describeSandbox', () => {
  it('names the mode and what it confines, in one line', () => {
    expect(describeSandbox('workspace-write', false)).toMatch(/^sandbox: workspace-write \(bubblewrap\): writes only in the workspace and a private \/tmp.*; no network; secrets withheld \(environment allowlisted, credential files hidden\)$/);
    expect(describeSandbox('read-only', true)).toMatch(/network allowed/);
    expect(describeSandbox('full-access', false)).toMatch(/^sandbox: full-access \(commands run with your full rights/);
    for (const m of ['read-only', 'workspace-write', 'full-access'] as const) expect(describeSandbox(m, false)).not.toContain('\n');
  });
});

describe('bash where the sandbox cannot be made', () => {
  it('refuses with TOOL_FAILED saying why and how to choose full-access; nothing runs', async () => {
    const root = await workspace();
    const rt = createRuntime({ tools: [...createBuiltinTools({ root, sandbox: { bwrap: '/nonexistent/bwrap' } }).all] });
    const r = await call(rt, 'bash', { command: 'touch ran' });
    expect(r.error?.code).toBe(ErrorCode.TOOL_FAILED);
    expect(r.error?.message).toContain('bash refuses to run: it cannot make its workspace-write sandbox');
    expect(r.error?.message).toContain('/nonexistent/bwrap was not found');
    expect(r.error?.message).toContain('"sandbox": { "mode": "full-access" }');
    expect(existsSync(join(root, 'ran'))).toBe(false);
  });

  it('runs when the user chose full-access', async () => {
    const root = await workspace();
    const rt = createRuntime({ tools: [...createBuiltinTools({ root, sandbox: { mode: 'full-access', bwrap: '/nonexistent/bwrap' } }).all] });
    const r = await call(rt, 'bash', { command: 'touch ran' });
    expect(r.isError).toBe(false);
    expect(r.metadata).toMatchObject({ sandbox: 'full-access', isolation: 'pid-namespace' });
    expect(existsSync(join(root, 'ran'))).toBe(true);
  });
});

describe.skipIf(skip)('the sandbox, run for real', () => {
  // Both ways bubblewrap is run: with a user namespace (the usual one), and without one (as root
  // where user namespaces are off), where only the dropped capabilities keep `umount` away.
  const variants = probe.ok ? [true, ...(process.getuid?.() === 0 ? [false] : [])] : [];
  for (const userns of variants) {
    it(`holds the protected paths with no capability to unmount or remount them (userns ${userns})`, async () => {
      const root = await workspace();
      await mkdir(join(root, '.git', 'hooks'), { recursive: true });
      await writeFile(join(root, '.git', 'config'), '[core]\n');
      const tools = createBuiltinTools({ root, sandbox: { probe: async () => ({ ok: true, bwrap: 'bwrap', userns }) } });
      const rt = createRuntime({ tools: [...tools.all] });
      const r = await call(rt, 'bash', {
        command: 'grep CapEff /proc/self/status; umount .git/hooks; mount -o remount,rw,bind .git/hooks; umount .git/config; echo evil > .git/hooks/pre-commit; echo evil >> .git/config',
      });
      expect(r.content).toContain('CapEff:\t0000000000000000');
      expect(readdirSync(join(root, '.git', 'hooks'))).toEqual([]);
      expect(await readFile(join(root, '.git', 'config'), 'utf8')).toBe('[core]\n');
      await tools.sandbox.dispose();
    });
  }

  it('runs the command as the child of its own init (pid 1), seeing no host process', async () => {
    const root = await workspace();
    const rt = createRuntime({ tools: [...createBuiltinTools({ root }).all] });
    const r = await call(rt, 'bash', { command: 'echo $PPID; ls /proc | grep -c "^[0-9]"' });
    const [ppid, count] = (r.value as { stdout: string }).stdout.trim().split('\n');
    expect(ppid).toBe('1');
    // init, the command's shell, ls, grep (and perhaps a subshell): never the host's processes.
    expect(Number(count)).toBeLessThan(8);
  });

  it('network: true lets a command reach a loopback listener; the default does not', async () => {
    let connections = 0;
    const server = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    try {
      const root = await workspace();
      const command = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`;
      const closed = createRuntime({ tools: [...createBuiltinTools({ root }).all] });
      expect((await call(closed, 'bash', { command })).content).not.toContain('connected');
      expect(connections).toBe(0);
      const open = createRuntime({ tools: [...createBuiltinTools({ root, sandbox: { network: true } }).all] });
      const r = await call(open, 'bash', { command });
      expect(r.content).toContain('connected');
      expect(r.metadata).toMatchObject({ sandbox: 'workspace-write', network: true });
      for (let i = 0; i < 50 && connections === 0; i++) await new Promise((res) => setTimeout(res, 20));
      expect(connections).toBe(1);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('a cancelled command gets SIGTERM first (its trap runs) and then everything is gone', async () => {
    const root = await workspace();
    const rt = createRuntime({ tools: [...createBuiltinTools({ root }).all] });
    const handle = rt.runCall({ callId: 'c', toolName: 'bash', input: { command: 'trap "echo stopped > trapped.txt; exit 1" TERM; echo ready > ready.txt; sleep 600 & wait' } });
    for (let i = 0; i < 300 && !existsSync(join(root, 'ready.txt')); i++) await new Promise((r) => setTimeout(r, 50));
    handle.cancel('stop');
    const r = await handle.result;
    expect(r.error?.code).toBe(ErrorCode.ABORTED);
    expect(await readFile(join(root, 'trapped.txt'), 'utf8')).toBe('stopped\n');
  });

  it('a private /tmp per sandbox: kept across calls, not shared with another sandbox, removed by dispose', async () => {
    const root = await workspace();
    const a = createBuiltinTools({ root });
    const b = createBuiltinTools({ root });
    const ra = createRuntime({ tools: [...a.all] });
    const rb = createRuntime({ tools: [...b.all] });
    await call(ra, 'bash', { command: 'echo mine > /tmp/note' });
    expect((await call(ra, 'bash', { command: 'cat /tmp/note' })).content).toBe('mine\n[exit code 0]');
    expect((await call(rb, 'bash', { command: 'cat /tmp/note' })).content).toMatch(/No such file/);
    await a.sandbox.dispose();
    await b.sandbox.dispose();
  });
});
