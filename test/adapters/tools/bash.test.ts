import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createBuiltinTools } from '../../../src/adapters/tools/builtinTools.js';
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
    expect((r.value as { stdout: string }).stdout).toBe(`${realpathSync(root)}\n`);
  });

  it('is exclusive: it never runs alongside other calls', async () => {
    const { rt } = await setup();
    const r = rt.runCall({ callId: 'c2', toolName: 'bash', input: { command: 'true' } });
    await r.result;
    const ev = rt.log.events().find((e) => e.type === 'tool/call' && e.callId === 'c2');
    expect(ev).toMatchObject({ executionMode: 'exclusive' });
  });
});
