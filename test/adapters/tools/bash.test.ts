import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createBashTool } from '../../../src/adapters/tools/bash.js';
import { createBuiltinTools } from '../../../src/adapters/tools/builtinTools.js';
import { createSandbox } from '../../../src/adapters/sandbox/sandbox.js';
import { probePidNamespace } from '../../../src/adapters/tools/pidNamespace.js';
import { Workspace } from '../../../src/adapters/tools/workspace.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import { ErrorCode } from '../../../src/protocol/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { timeout } from '../../../src/runtime/wrappers/timeout.js';
import { call, tempDir } from '../workspaceFixture.js';

/** A `sleep` duration no other process on the machine uses, so ps only finds ours. */
const marker = () => `30.${randomInt(100_000, 999_999)}`;

/** Live (non-zombie) processes whose command line mentions `needle`. */
function alive(needle: string): string[] {
  const out = execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.includes(needle) && !l.startsWith('Z'));
}

/** Killing is asynchronous in the kernel: give it a bounded moment, then report what is left. */
async function aliveAfterSettling(needle: string): Promise<string[]> {
  for (let i = 0; i < 50 && alive(needle).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  return alive(needle);
}

async function setup() {
  const root = await tempDir();
  const rt = createRuntime({ tools: [...createBuiltinTools({ root }).all] });
  return { rt, root };
}

describe('bash', () => {
  it('settles as TIMEOUT under the timeout wrapper and leaves no process of its group alive', async () => {
    const { rt } = await setup();
    rt.hooks.on('tools/execute', 'timeout', timeout({ ms: 500 }));
    const m = marker();
    const r = await call(rt, 'bash', { command: `sleep ${m} & sleep ${m}; wait` });
    expect(r.isError).toBe(true);
    expect(r.error?.code).toBe(ErrorCode.TIMEOUT);
    expect(await aliveAfterSettling(`sleep ${m}`)).toEqual([]);
  });

  it('kills the whole group when the caller cancels: the call is ABORTED and nothing survives', async () => {
    const { rt } = await setup();
    const m = marker();
    const handle = rt.runCall({ callId: 'c1', toolName: 'bash', input: { command: `(sleep ${m}) & sleep ${m}; wait` } });
    for (let i = 0; i < 50 && alive(`sleep ${m}`).length < 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(`sleep ${m}`).length).toBeGreaterThanOrEqual(2);
    handle.cancel('user pressed stop');
    const r = await handle.result;
    expect(r.error?.code).toBe(ErrorCode.ABORTED);
    expect(await aliveAfterSettling(`sleep ${m}`)).toEqual([]);
  });

  it('honours its own timeoutMs argument', async () => {
    const { rt } = await setup();
    const m = marker();
    const r = await call(rt, 'bash', { command: `sleep ${m}`, timeoutMs: 300 });
    expect(r.error?.code).toBe(ErrorCode.TIMEOUT);
    expect(await aliveAfterSettling(`sleep ${m}`)).toEqual([]);
  });

  it('does not let a background job outlive a command that exited', async () => {
    const { rt } = await setup();
    const m = marker();
    const r = await call(rt, 'bash', { command: `sleep ${m} >/dev/null 2>&1 & echo started` });
    expect(r.isError).toBe(false);
    expect(r.content).toBe('started\n[exit code 0]');
    expect(await aliveAfterSettling(`sleep ${m}`)).toEqual([]);
  });

  it('reports stdout, stderr and a non-zero exit code as a result, in the workspace directory', async () => {
    const { rt, root } = await setup();
    const r = await call(rt, 'bash', { command: 'pwd; echo oops >&2; exit 3' });
    expect(r.isError).toBe(false);
    expect(r.value).toMatchObject({ exitCode: 3, stderr: 'oops\n' });
    expect(r.content).toContain('[stderr]\noops\n');
    expect(r.content).toContain('[exit code 3]');
    expect(r.metadata).toMatchObject({ exitCode: 3, signal: null, isolation: 'pid-namespace' });
    expect((r.value as { stdout: string }).stdout).toBe(`${realpathSync(root)}\n`);
  });

  it('is exclusive: it never runs alongside other calls', async () => {
    const { rt } = await setup();
    const r = rt.runCall({ callId: 'c2', toolName: 'bash', input: { command: 'true' } });
    await r.result;
    const ev = rt.log.events().find((e) => e.type === 'tool/call' && e.callId === 'c2');
    expect(ev).toMatchObject({ executionMode: 'exclusive' });
  });

  it('in full-access, refuses to run when no PID namespace is available, saying how to opt into the weaker mode', async () => {
    const root = await tempDir();
    const bash = createBashTool(new Workspace(root), { sandbox: createSandbox({ root, mode: 'full-access' }), probePidNamespace: () => probePidNamespace({ unshare: '/nonexistent/unshare' }) });
    const rt = createRuntime({ tools: [bash] });
    const r = await call(rt, 'bash', { command: 'touch ran' });
    expect(r.error?.code).toBe(ErrorCode.TOOL_FAILED);
    expect(r.error?.message).toContain('bash refuses to run');
    expect(r.error?.message).toContain('/nonexistent/unshare');
    expect(r.error?.message).toContain("bashIsolation: 'process-group'");
    expect(existsSync(join(root, 'ran'))).toBe(false);
  });

  it("runs with process-group isolation only when the user opts in, and says so in the metadata", async () => {
    const root = await tempDir();
    const rt = createRuntime({ tools: [...createBuiltinTools({ root, sandbox: 'full-access', bashIsolation: 'process-group' }).all] });
    const r = await call(rt, 'bash', { command: 'echo $$' });
    expect(r.isError).toBe(false);
    expect(r.metadata).toMatchObject({ exitCode: 0, isolation: 'process-group' });
    // Not pid 1: no namespace of its own.
    expect((r.value as { stdout: string }).stdout).not.toBe('1\n');
  });

  it('runs the command in its own PID namespace by default, as the child of its init (pid 1)', async () => {
    const { rt } = await setup();
    const r = await call(rt, 'bash', { command: 'echo $PPID' });
    expect(r.content).toBe('1\n[exit code 0]');
  });

  it('a stopped command does not go on to its next step', async () => {
    const { rt, root } = await setup();
    const m = marker();
    const r = await call(rt, 'bash', { command: `sleep ${m}; touch after-timeout`, timeoutMs: 300 });
    expect(r.error?.code).toBe(ErrorCode.TIMEOUT);
    // The call settled once every process of the command was gone: nothing can create it later.
    expect(existsSync(join(root, 'after-timeout'))).toBe(false);
  });

  it('a timed-out command returns only the tail of a long partial output, saying how much was cut', async () => {
    const root = await tempDir();
    const clock = new ManualClock();
    const rt = createRuntime({ tools: [...createBuiltinTools({ root }).all], clock });
    const m = marker();
    const handle = rt.runCall({ callId: 't', toolName: 'bash', input: { command: `head -c 40000 /dev/zero | tr '\\0' x; echo; echo last-line; sleep ${m}`, timeoutMs: 5_000 } });
    // The sleep itself (not a wrapper whose argv carries the whole command line): the output is out.
    const sleeping = () => alive(`sleep ${m}`).filter((l) => /^\S+\s+sleep /.test(l));
    for (let i = 0; i < 300 && sleeping().length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    await clock.advance(5_000);
    const r = await handle.result;
    expect(r.error?.code).toBe(ErrorCode.TIMEOUT);
    expect(r.content.startsWith('TIMEOUT: command did not finish within 5000 ms\n')).toBe(true);
    expect(r.content).toContain('last-line\n');
    expect(r.content).toMatch(/\[partial output: the command timed out and was killed before it finished; no exit code; \d+ earlier characters of stdout not shown\]$/);
    expect(r.content.length).toBeLessThan(20_000);
    expect(r.metadata).toMatchObject({ partial: true, exitCode: null, stdoutChars: 40_011 });
    expect(await aliveAfterSettling(`sleep ${m}`)).toEqual([]);
  });
  it('streams its output as tool/progress events while the command runs (issue 15.1); the result still has all of it', async () => {
    const { rt, root } = await setup();
    const { writeFile } = await import('node:fs/promises');
    // The command waits for a file the test creates only once the first output is in the log.
    const handle = rt.runCall({
      callId: 'stream',
      toolName: 'bash',
      input: { command: 'echo started; echo "warn é" >&2; while [ ! -e go ]; do sleep 0.05; done; echo finished' },
    });
    const progressText = () =>
      rt.log
        .events()
        .filter((e) => e.type === 'tool/progress' && e.callId === 'stream')
        .map((e) => (e.type === 'tool/progress' ? (e.output ?? '') : ''))
        .join('');
    for (let i = 0; i < 600 && !progressText().includes('started'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(progressText()).toContain('started');
    expect(rt.log.events().some((e) => e.type === 'tool/result')).toBe(false); // still running
    await writeFile(join(root, 'go'), '');
    const r = await handle.result;
    expect(r.isError).toBe(false);
    expect(r.content).toContain('finished');
    // Every byte of output went through progress, in order per stream, before the result.
    const streamed = progressText();
    expect(streamed).toContain('warn é');
    expect(streamed.replace('warn é\n', '')).toBe('started\nfinished\n');
    const types = rt.log.events().filter((e) => 'callId' in e && e.callId === 'stream').map((e) => e.type);
    expect(types.at(-1)).toBe('tool/result');
  });
});
