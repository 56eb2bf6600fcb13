// dsh issue 10 item 4: no process a `bash` call starts outlives the call: not when the command
// ends, times out or is cancelled, and not when the dsh process itself is SIGKILLed; `setsid`,
// double forks and `nohup` included. Runs the real built-in tool through a runtime, then scans
// /proc for the processes it marked.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createBuiltinTools } from '../../src/adapters/tools/builtinTools.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { call, tempDir } from '../adapters/workspaceFixture.js';
import { killProcesses, liveProcesses, waitForProcesses } from './processScan.js';

/** Unique to this test run: every process the tests start carries it in its argv, nothing else does. */
const TOKEN = `dsh-orphan-${randomBytes(6).toString('hex')}`;
const hosts: ChildProcess[] = [];

afterAll(() => {
  // Clean up after a failing test too: only our own processes (the token is ours alone).
  for (const h of hosts) if (h.exitCode === null && h.signalCode === null) h.kill('SIGKILL');
  killProcesses(TOKEN);
});

/** Marked sleeps a command leaves behind in three ways no process group contains. */
function escapees(tag: string): string {
  return [
    `setsid -f bash -c 'exec -a ${tag}-setsid sleep 600'`,
    `( bash -c 'exec -a ${tag}-double sleep 600' & )`,
    `nohup bash -c 'exec -a ${tag}-nohup sleep 600' >/dev/null 2>&1 &`,
    // Wait (bounded) until all three run, so the call really has something to leave behind.
    `for i in $(seq 300); do [ "$(cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -c '^${tag}-')" -ge 3 ] && break; sleep 0.1; done`,
    'echo started',
  ].join('\n');
}

/** Processes whose argv0 is one of `tag`'s marked sleeps. */
const marked = (tag: string) => liveProcesses(tag).filter((p) => p.args.startsWith(`${tag}-`));

/** Everything still alive that mentions `tag`: the marked sleeps and any wrapper (unshare, bash) of their call. */
const survivors = async (tag: string) => (await waitForProcesses(tag, (ps) => ps.length === 0, 10_000)).map((p) => p.args);

async function setup(clock?: ManualClock) {
  const root = await tempDir();
  const rt = createRuntime({ tools: [...createBuiltinTools({ root }).all], ...(clock ? { clock } : {}) });
  return { rt, root };
}

describe('bash leaves no process behind (issue 10.4)', () => {
  it('when the command ends: setsid, double-forked and nohup processes die with it', async () => {
    const { rt } = await setup();
    const tag = `${TOKEN}-end`;
    const r = await call(rt, 'bash', { command: escapees(tag) });
    expect(r.isError).toBe(false);
    expect(r.content).toBe('started\n[exit code 0]');
    expect(await survivors(tag)).toEqual([]);
  });

  it('when the command times out: the escapees die, and the output so far comes back marked partial', async () => {
    const clock = new ManualClock();
    const { rt } = await setup(clock);
    const tag = `${TOKEN}-timeout`;
    const handle = rt.runCall({ callId: 't1', toolName: 'bash', input: { command: `${escapees(tag)}\nexec -a ${tag}-fg sleep 600`, timeoutMs: 60_000 } });
    expect((await waitForProcesses(tag, (ps) => ps.filter((p) => p.args.startsWith(`${tag}-`)).length >= 4)).length).toBeGreaterThanOrEqual(4);
    expect(marked(tag).map((p) => p.args.split(' ')[0]).sort()).toEqual([`${tag}-double`, `${tag}-fg`, `${tag}-nohup`, `${tag}-setsid`]);
    await clock.advance(60_000);
    const r = await handle.result;
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe(ErrorCode.TIMEOUT);
    expect(r.content).toContain('started\n');
    expect(r.content).toContain('[partial output: the command timed out');
    expect(r.metadata).toMatchObject({ partial: true, exitCode: null });
    expect(await survivors(tag)).toEqual([]);
  });

  it('when the call is cancelled: the escapees die, and the output so far comes back marked partial', async () => {
    // The manual clock holds the machine's abort grace, so the result is the body's own.
    const clock = new ManualClock();
    const { rt } = await setup(clock);
    const tag = `${TOKEN}-cancel`;
    const handle = rt.runCall({ callId: 'c1', toolName: 'bash', input: { command: `${escapees(tag)}\nexec -a ${tag}-fg sleep 600` } });
    await waitForProcesses(tag, (ps) => ps.filter((p) => p.args.startsWith(`${tag}-`)).length >= 4);
    expect(marked(tag)).toHaveLength(4);
    handle.cancel('user pressed stop');
    const r = await handle.result;
    expect(r.error?.code).toBe(ErrorCode.ABORTED);
    expect(r.content).toContain('started\n');
    expect(r.content).toContain('[partial output: the command was cancelled');
    expect(r.metadata).toMatchObject({ partial: true, exitCode: null });
    expect(await survivors(tag)).toEqual([]);
  });

  it('when the dsh process itself is SIGKILLed mid-call: nothing it started survives', async () => {
    const root = await tempDir();
    const tag = `${TOKEN}-sigkill`;
    const host = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./bashOrphanHost.ts', import.meta.url))], {
      env: { ...process.env, DSH_ORPHAN_ROOT: root, DSH_ORPHAN_COMMAND: `${escapees(tag)}\nexec -a ${tag}-fg sleep 600` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    hosts.push(host);
    let hostOutput = '';
    host.stdout!.on('data', (c: Buffer) => (hostOutput += c.toString()));
    host.stderr!.on('data', (c: Buffer) => (hostOutput += c.toString()));
    const exited = new Promise<void>((resolve) => host.once('exit', () => resolve()));
    const before = await waitForProcesses(tag, (ps) => ps.filter((p) => p.args.startsWith(`${tag}-`)).length >= 4, 60_000);
    expect(before.filter((p) => p.args.startsWith(`${tag}-`)), hostOutput).toHaveLength(4);
    host.kill('SIGKILL');
    await exited;
    expect(host.signalCode).toBe('SIGKILL');
    expect(await survivors(tag)).toEqual([]);
  }, 90_000);
});
