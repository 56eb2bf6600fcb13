// Command hooks at every stage (issue 26 item 1), with real hook programs in sh and in node, run by
// the real runner in the real sandbox: what the model gets (result codes and content), what the
// approver is asked, what the log records, and that nothing a hook starts survives it.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHookRunner } from '../../../src/adapters/hooks/hookRunner.js';
import { probeBwrap } from '../../../src/adapters/sandbox/bwrapProbe.js';
import { createSandbox } from '../../../src/adapters/sandbox/sandbox.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { applyConfig, type PolicyConfig } from '../../../src/runtime/policies/applyConfig.js';
import type { CommandHooksConfig } from '../../../src/runtime/policies/commandHooks.js';
import type { ApprovalAnswer } from '../../../src/protocol/index.js';
import { liveProcesses, waitForProcesses } from '../../security/processScan.js';
import { call, fakeBash, pathTool, recordingApproval } from './fixtures.js';

const probe = await probeBwrap();
const skip = !probe.ok && process.env.CI === undefined;
if (skip) console.warn(`commandHooks.test.ts: skipped: no sandbox here (${probe.reason}); CI never skips them`);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const NODE = process.execPath;

/** Hook scripts, by name, written under `.dsh/hooks/` of a fresh workspace (outside /tmp: the sandbox's /tmp is private). */
const SCRIPTS: Record<string, string> = {
  'allow.sh': `#!/bin/sh\ncat >/dev/null\necho '{"version":1,"decision":"allow"}'\n`,
  'ask.sh': `#!/bin/sh\ncat >/dev/null\necho '{"version":1,"decision":"ask","reason":"the hook wants a person to look"}'\n`,
  'next.sh': `#!/bin/sh\ncat >/dev/null\necho '{"version":1,"decision":"next"}'\n`,
  'no-rm.sh': [
    '#!/bin/sh',
    'input=$(cat)',
    'case "$input" in',
    `  *'"rm '*) echo '{"version":1,"decision":"deny","reason":"rm is not for agents here"}' ;;`,
    `  *) echo '{"version":1,"decision":"next"}' ;;`,
    'esac',
    '',
  ].join('\n'),
  'exit2.sh': `#!/bin/sh\ncat >/dev/null\necho 'the build directory is off limits' >&2\nexit 2\n`,
  // 10,108 bytes of every byte value on stderr, escape sequences included (issue 31 item 1).
  'binary2.sh': `#!/bin/sh\ncat >/dev/null\nhead -c 10108 /dev/urandom >&2\nprintf '\\033]0;pwned\\007\\033[2J' >&2\nexit 2\n`,
  'exit1.sh': `#!/bin/sh\ncat >/dev/null\necho 'something broke' >&2\nexit 1\n`,
  'garbage.sh': `#!/bin/sh\ncat >/dev/null\necho 'sure, go ahead!'\n`,
  // Starts a child that would outlive it, says it is ready, then hangs.
  'hang.sh': [
    '#!/bin/sh',
    `sh -c 'sleep 600; :' "$0-child" &`,
    'echo ready > hang.ready',
    'sleep 600',
    '',
  ].join('\n'),
  'deny.js': [
    `let s = '';`,
    `process.stdin.on('data', (d) => (s += d)).on('end', () => {`,
    `  const input = JSON.parse(s);`,
    `  process.stdout.write(JSON.stringify({ version: 1, decision: 'deny', reason: 'node says no to ' + input.tool + ' ' + JSON.stringify(input.args) }));`,
    `});`,
    '',
  ].join('\n'),
  'rewrite.js': [
    `process.stdin.resume();`,
    `process.stdin.on('end', () => process.stdout.write(JSON.stringify({ version: 1, decision: 'allow', updatedInput: { command: 'echo rewritten' } })));`,
    '',
  ].join('\n'),
  'env.js': [
    `process.stdin.resume();`,
    `process.stdin.on('end', () => {`,
    `  const reason = 'OPENAI_API_KEY=' + String(process.env.OPENAI_API_KEY) + ' PATH=' + (process.env.PATH ? 'set' : 'unset');`,
    `  process.stdout.write(JSON.stringify({ version: 1, decision: 'deny', reason }));`,
    `});`,
    '',
  ].join('\n'),
  // Records what it read (the workspace is writable in workspace-write), then lets the call pass.
  'record.js': [
    `const fs = require('node:fs');`,
    `let s = '';`,
    `process.stdin.on('data', (d) => (s += d)).on('end', () => {`,
    `  const input = JSON.parse(s);`,
    `  fs.appendFileSync('seen.jsonl', s + '\\n');`,
    `  if (input.stage === 'postExecute' || input.stage === 'result') process.stdout.write(JSON.stringify({ version: 1, decision: 'accept' }));`,
    `  else process.stdout.write(JSON.stringify({ version: 1, decision: 'next' }));`,
    `});`,
    '',
  ].join('\n'),
  'block.sh': `#!/bin/sh\ncat >/dev/null\necho '{"version":1,"decision":"block","feedback":"that output leaks a token"}'\n`,
  'redact.js': [
    `let s = '';`,
    `process.stdin.on('data', (d) => (s += d)).on('end', () => {`,
    `  const input = JSON.parse(s);`,
    `  process.stdout.write(JSON.stringify({ version: 1, decision: 'accept', content: input.result.content.replace(/secret/g, '[redacted]') }));`,
    `});`,
    '',
  ].join('\n'),
};

function workspace(): string {
  const dir = mkdtempSync(join('/var/tmp', 'dsh-hooks-'));
  dirs.push(dir);
  mkdirSync(join(dir, '.dsh', 'hooks'), { recursive: true });
  for (const [name, text] of Object.entries(SCRIPTS)) {
    writeFileSync(join(dir, '.dsh', 'hooks', name), text);
    chmodSync(join(dir, '.dsh', 'hooks', name), 0o755);
  }
  return dir;
}

const sh = (name: string) => [`.dsh/hooks/${name}`];
const node = (name: string) => [NODE, `.dsh/hooks/${name}`];

/** A runtime with a fake bash and a `write`-like tool, the CLI's ask-before-changes policy, and `hooks` from the config. */
function setup(hooks: CommandHooksConfig, o: { answer?: ApprovalAnswer; config?: PolicyConfig; env?: Record<string, string | undefined> } = {}) {
  return setupWithRemover(hooks, o);
}

function setupWithRemover(hooks: CommandHooksConfig, o: { answer?: ApprovalAnswer; config?: PolicyConfig; env?: Record<string, string | undefined> } = {}) {
  const root = workspace();
  const bash = fakeBash();
  const write = pathTool('write');
  const approval = recordingApproval(o.answer ?? 'denied');
  const rt = createRuntime({ tools: [bash.tool, write.tool], approval: approval.service });
  rt.hooks.on('tools/pre-execute', 'ask-before-changes', () => ({ kind: 'ask', reason: 'the default policy asks' }));
  const sandbox = createSandbox({ root, env: o.env ?? process.env });
  const remove = applyConfig(rt, { ...o.config, hooks }, { root, hookRunner: createHookRunner({ root, sandbox }), sessionId: 'session-abc' });
  return { rt, root, bash, write, asked: approval.asked, sandbox, remove };
}

const failures = (rt: ReturnType<typeof createRuntime>) => rt.log.events().filter((e) => e.type === 'hook/failed') as Array<{ listener: string; message: string; failed: string; hook: string }>;

describe.skipIf(skip)('preExecute hooks', () => {
  it('sh allow: the call runs without the question the default policy would ask', async () => {
    const { rt, bash, asked } = setup({ preExecute: [{ command: sh('allow.sh') }] });
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.isError, r.content).toBe(false);
    expect(bash.ran).toEqual(['ls']);
    expect(asked).toEqual([]);
  }, 60_000);

  it('node deny: POLICY_DENIED with the hook\'s reason (naming the hook); the body never runs', async () => {
    const { rt, bash } = setup({ preExecute: [{ command: node('deny.js') }] });
    const r = await call(rt, 'bash', { command: 'ls -la' });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain('node says no to bash {"command":"ls -la"}');
    expect(r.content).toContain('hooks.preExecute[0]');
    expect(r.decision).toEqual({ stage: 'pre-execute', outcome: 'deny', by: `dsh:hook preExecute[0] ${NODE}`, rule: `hooks.preExecute[0] (${NODE})` });
    expect(bash.ran).toEqual([]);
  }, 60_000);

  it('sh ask: the approver is asked with the hook\'s reason; a refusal is APPROVAL_DENIED', async () => {
    const { rt, bash, asked } = setup({ preExecute: [{ command: sh('ask.sh') }] });
    const r = await call(rt, 'bash', { command: 'make' });
    expect(r.error?.code).toBe('APPROVAL_DENIED');
    expect(asked.map((a) => a.reason)).toEqual(['the hook wants a person to look']);
    expect(bash.ran).toEqual([]);
  }, 60_000);

  it('next hands over: the next listener decides (here the default policy asks)', async () => {
    const { rt, asked } = setup({ preExecute: [{ command: sh('next.sh') }] }, { answer: 'allowed-once' });
    const r = await call(rt, 'bash', { command: 'make' });
    expect(r.isError).toBe(false);
    expect(asked.map((a) => a.reason)).toEqual(['the default policy asks']);
  }, 60_000);

  it('exit 2 denies with stderr as the reason, as Claude Code does', async () => {
    const { rt, bash } = setup({ preExecute: [{ command: sh('exit2.sh') }] });
    const r = await call(rt, 'bash', { command: 'rm -r build' });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain('the build directory is off limits');
    expect(bash.ran).toEqual([]);
  }, 60_000);

  it('an exit-2 reason of binary noise reaches the model and the terminal bounded and printable, from a preExecute and a guard hook', async () => {
    for (const stage of ['preExecute', 'guard'] as const) {
      const { rt, bash } = setup({ [stage]: [{ command: sh('binary2.sh') }] }, { answer: 'allowed-once' });
      const r = await call(rt, 'bash', { command: 'ls' });
      expect(r.error?.code).toBe(stage === 'guard' ? 'GUARD_DENIED' : 'POLICY_DENIED');
      for (const text of [r.content, r.error!.message]) {
        expect(text.length, stage).toBeLessThan(5_000);
        expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      }
      expect(bash.ran).toEqual([]);
    }
  }, 60_000);

  it('any other exit code fails closed: HOOK_FAILED naming the hook, with its stderr, logged', async () => {
    const { rt, bash } = setup({ preExecute: [{ command: sh('exit1.sh') }] });
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.error?.code).toBe('HOOK_FAILED');
    expect(`${r.content} ${r.error?.message}`).toContain('dsh:hook preExecute[0] .dsh/hooks/exit1.sh');
    expect(r.error?.message).toContain('exited with code 1: something broke');
    expect(failures(rt)).toEqual([expect.objectContaining({ hook: 'tools/pre-execute', listener: 'dsh:hook preExecute[0] .dsh/hooks/exit1.sh', failed: 'closed' })]);
    expect(r.decision).toEqual({ stage: 'pre-execute', outcome: 'failed', by: 'dsh:hook preExecute[0] .dsh/hooks/exit1.sh' });
    expect(bash.ran).toEqual([]);
  }, 60_000);

  it("a dsh started with SHLVL=0 (a background job, a daemon): the user's ~/.bashrc never runs around a hook, so its noise is not the hook's stderr", async () => {
    const home = mkdtempSync(join('/var/tmp', 'dsh-home-'));
    dirs.push(home);
    writeFileSync(join(home, '.bashrc'), 'echo "pyenv: cannot rehash: shims is not writable" >&2\n');
    const { rt, bash } = setup({ preExecute: [{ command: sh('exit1.sh') }] }, { env: { ...process.env, HOME: home, SHLVL: '0' } });
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.error?.code).toBe('HOOK_FAILED');
    expect(r.error?.message).toContain('exited with code 1: something broke');
    expect(r.error?.message).not.toContain('pyenv');
    expect(bash.ran).toEqual([]);
  }, 60_000);

  it('garbage on stdout fails closed: HOOK_FAILED, saying the answer is not JSON', async () => {
    const { rt, bash } = setup({ preExecute: [{ command: sh('garbage.sh') }] });
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.error?.code).toBe('HOOK_FAILED');
    expect(r.error?.message).toContain('dsh:hook preExecute[0] .dsh/hooks/garbage.sh');
    expect(r.error?.message).toContain('not one JSON document: "sure, go ahead!"');
    expect(bash.ran).toEqual([]);
  }, 60_000);

  it('an answer that tries to rewrite the arguments fails closed with a clear error; the call never runs, rewritten or not', async () => {
    const { rt, bash } = setup({ preExecute: [{ command: node('rewrite.js') }] });
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.error?.code).toBe('HOOK_FAILED');
    expect(r.error?.message).toContain(`tried to rewrite the call's arguments ("updatedInput" in its answer): arguments are frozen`);
    expect(bash.ran).toEqual([]);
    const logged = rt.log.events().find((e) => e.type === 'tool/call') as { input: unknown };
    expect(logged.input).toEqual({ command: 'ls' });
  }, 60_000);

  it('a hook that hangs is killed at its timeout with every process it started: HOOK_FAILED (TIMEOUT), no survivor', async () => {
    const { rt, root, bash } = setup({ preExecute: [{ command: sh('hang.sh'), timeoutMs: 10_000 }] });
    const pending = call(rt, 'bash', { command: 'ls' });
    // While it hangs, the hook and the child it started in the background are alive.
    const ready = join(root, 'hang.ready');
    for (let i = 0; i < 600 && !existsSync(ready); i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(ready)).toBe(true);
    expect(liveProcesses(root).length).toBeGreaterThanOrEqual(2);
    const r = await pending;
    expect(r.error?.code).toBe('HOOK_FAILED');
    expect(r.error?.message).toContain('dsh:hook preExecute[0] .dsh/hooks/hang.sh');
    expect(r.error?.message).toContain('TIMEOUT: no answer within 10000 ms');
    expect(bash.ran).toEqual([]);
    expect(await waitForProcesses(root, (ps) => ps.length === 0)).toEqual([]);
  }, 90_000);

  it('a hook\'s own deadline is capped by timeouts.hookMs, as docs/hooks.md promises', async () => {
    const { rt, root, bash } = setup({ preExecute: [{ command: sh('hang.sh'), timeoutMs: 600_000 }] }, { config: { timeouts: { hookMs: 1_000 } } });
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.error?.code).toBe('HOOK_FAILED');
    expect(r.error?.message).toContain('TIMEOUT: no answer within 1000 ms');
    expect(bash.ran).toEqual([]);
    expect(await waitForProcesses(root, (ps) => ps.length === 0)).toEqual([]);
  }, 90_000);

  it("a hook never sees dsh's secrets (OPENAI_API_KEY is absent), though it gets the rest of the environment", async () => {
    const { rt } = setup({ preExecute: [{ command: node('env.js') }] }, { env: { ...process.env, OPENAI_API_KEY: 'sk-test-not-for-hooks' } });
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain('OPENAI_API_KEY=undefined PATH=set');
    expect(r.content).not.toContain('sk-test-not-for-hooks');
  }, 60_000);

  it('gets one JSON document: version, stage, hook, tool, frozen args, session and call ids', async () => {
    const { rt, root } = setup({ preExecute: [{ command: node('record.js') }] }, { answer: 'allowed-once' });
    await call(rt, 'write', { path: 'src/a.ts', text: 'x' });
    const [input] = readFileSync(join(root, 'seen.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(input).toEqual({ version: 1, stage: 'preExecute', hook: `hooks.preExecute[0] (${NODE})`, tool: 'write', args: { path: 'src/a.ts', text: 'x' }, sessionId: 'session-abc', callId: expect.stringMatching(/^p-/) });
  }, 60_000);

  it('tools and paths matchers: a hook is consulted only for the calls they match', async () => {
    const { rt, write, bash } = setup({ preExecute: [{ command: node('deny.js'), tools: 'write', paths: 'secrets/**' }] }, { answer: 'allowed-once' });
    expect((await call(rt, 'write', { path: './secrets/key', text: 'x' })).error?.code).toBe('POLICY_DENIED');
    expect((await call(rt, 'write', { path: 'src/a.ts', text: 'x' })).isError).toBe(false);
    expect((await call(rt, 'bash', { command: 'cat secrets/key' })).isError).toBe(false);
    expect(write.ran).toEqual(['src/a.ts']);
    expect(bash.ran).toEqual(['cat secrets/key']);
  }, 60_000);

  it('run after the config\'s built-in policies: a permission rule that decides first is not overridden', async () => {
    const { rt, bash } = setup({ preExecute: [{ command: sh('allow.sh') }] }, { config: { permissions: [{ tool: 'bash', decision: 'deny', reason: 'no bash by rule' }] } });
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain('no bash by rule');
    expect(bash.ran).toEqual([]);
  }, 60_000);
});

describe.skipIf(skip)('guard hooks', () => {
  it('deny is GUARD_DENIED naming the guard; a permission allow cannot skip it, and nobody is asked', async () => {
    const { rt, bash, asked } = setup({ guard: [{ command: sh('no-rm.sh') }] }, { config: { permissions: [{ tool: 'bash', decision: 'allow' }] } });
    const r = await call(rt, 'bash', { command: 'rm -rf build' });
    expect(r.error?.code).toBe('GUARD_DENIED');
    expect(r.content).toContain('rm is not for agents here');
    expect(r.content).toContain('hooks.guard[0] (.dsh/hooks/no-rm.sh)');
    expect(r.decision).toEqual({ stage: 'guard', outcome: 'deny', by: 'dsh:hook guard[0] .dsh/hooks/no-rm.sh', rule: 'hooks.guard[0] (.dsh/hooks/no-rm.sh)' });
    expect(asked).toEqual([]);
    expect(bash.ran).toEqual([]);
    expect((await call(rt, 'bash', { command: 'ls' })).isError).toBe(false);
    expect(bash.ran).toEqual(['ls']);
  }, 60_000);

  it('a call the guard will deny is not asked about (the default policy would ask)', async () => {
    const { rt, bash, asked } = setup({ guard: [{ command: sh('no-rm.sh') }] }, { answer: 'allowed-once' });
    const r = await call(rt, 'bash', { command: 'rm -rf build' });
    expect(r.error?.code).toBe('GUARD_DENIED');
    expect(asked).toEqual([]);
    expect((await call(rt, 'bash', { command: 'ls' })).isError).toBe(false);
    expect(asked.map((a) => a.reason)).toEqual(['the default policy asks']);
    expect(bash.ran).toEqual(['ls']);
  }, 60_000);

  it('a call that reaches the guard without the hook\'s verdict (pre-execute reordered around it) is still judged before its body runs', async () => {
    const { rt, bash } = setup({ guard: [{ command: sh('no-rm.sh') }] });
    rt.hooks.on('tools/pre-execute', 'allow-everything', () => ({ kind: 'allow' }));
    rt.hooks.order('tools/pre-execute', ['allow-everything']);
    const r = await call(rt, 'bash', { command: 'rm -rf build' });
    expect(r.error?.code).toBe('GUARD_DENIED');
    expect(r.content).toContain('rm is not for agents here (guard hook hooks.guard[0] (.dsh/hooks/no-rm.sh))');
    expect(bash.ran).toEqual([]);
    expect((await call(rt, 'bash', { command: 'ls' })).isError).toBe(false);
    expect(bash.ran).toEqual(['ls']);
  }, 60_000);

  it('exit 2 denies with stderr; a failing guard hook fails closed (HOOK_FAILED naming it)', async () => {
    const a = setup({ guard: [{ command: sh('exit2.sh') }] }, { answer: 'allowed-once' });
    const r = await call(a.rt, 'bash', { command: 'ls' });
    expect(r.error?.code).toBe('GUARD_DENIED');
    expect(r.content).toContain('the build directory is off limits');
    const b = setup({ guard: [{ command: sh('garbage.sh') }] }, { answer: 'allowed-once' });
    const f = await call(b.rt, 'bash', { command: 'ls' });
    expect(f.error?.code).toBe('HOOK_FAILED');
    expect(f.error?.message).toContain('dsh:hook guard[0] .dsh/hooks/garbage.sh');
    expect(a.bash.ran).toEqual([]);
    expect(b.bash.ran).toEqual([]);
  }, 60_000);

  it("applyConfig's remover takes the pre-execute hooks away; the guard hooks stay (guards are append-only)", async () => {
    const { rt, bash, remove } = setupWithRemover({ guard: [{ command: sh('no-rm.sh') }], preExecute: [{ command: node('deny.js'), tools: 'write' }] }, { answer: 'allowed-once' });
    expect((await call(rt, 'write', { path: 'a', text: 'x' })).error?.code).toBe('POLICY_DENIED');
    remove();
    expect((await call(rt, 'write', { path: 'a', text: 'x' })).isError).toBe(false);
    expect((await call(rt, 'bash', { command: 'rm -rf build' })).error?.code).toBe('GUARD_DENIED');
    expect(bash.ran).toEqual([]);
  }, 60_000);

  it('a guard hook cannot allow: an "allow" answer is invalid and fails closed', async () => {
    const { rt, bash } = setup({ guard: [{ command: sh('allow.sh') }] }, { answer: 'allowed-once' });
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.error?.code).toBe('HOOK_FAILED');
    expect(r.error?.message).toContain('invalid guard answer');
    expect(bash.ran).toEqual([]);
  }, 60_000);
});

describe.skipIf(skip)('postExecute and result hooks', () => {
  it('block: POST_EXECUTE_BLOCKED with the feedback (the body ran; its output does not reach the model)', async () => {
    const { rt, bash } = setup({ postExecute: [{ command: sh('block.sh') }] }, { answer: 'allowed-once' });
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(bash.ran).toEqual(['ls']);
    expect(r.error?.code).toBe('POST_EXECUTE_BLOCKED');
    expect(r.content).toContain('that output leaks a token');
    expect(r.decision).toEqual({ stage: 'post-execute', outcome: 'block', by: 'dsh:hook postExecute[0] .dsh/hooks/block.sh' });
  }, 60_000);

  it('exit 2 blocks with stderr as the feedback', async () => {
    const { rt } = setup({ postExecute: [{ command: sh('exit2.sh') }] }, { answer: 'allowed-once' });
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.error?.code).toBe('POST_EXECUTE_BLOCKED');
    expect(r.content).toContain('the build directory is off limits');
  }, 60_000);

  it('accept with content replaces the display only: the value is kept', async () => {
    const { rt } = setup({ postExecute: [{ command: node('redact.js'), tools: 'write' }] }, { answer: 'allowed-once' });
    const r = await call(rt, 'write', { path: 'secret.txt', text: 'x' });
    expect(r.isError).toBe(false);
    expect(r.content).toBe('write [redacted].txt');
    expect(r.value).toBe('write secret.txt');
  }, 60_000);

  it('a result observer sees the final result with the call; a failing one is logged and ignored (fail open)', async () => {
    const { rt, root } = setup({ result: [{ command: node('record.js') }, { command: sh('exit1.sh') }] }, { answer: 'allowed-once' });
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.isError).toBe(false);
    expect(r.content).toBe('ran');
    const seen = await waitFor(() => (existsSync(join(root, 'seen.jsonl')) ? readFileSync(join(root, 'seen.jsonl'), 'utf8') : undefined));
    expect(JSON.parse(seen.trim())).toMatchObject({ version: 1, stage: 'result', tool: 'bash', args: { command: 'ls' }, result: { isError: false, content: 'ran' } });
    // The failure of exit1.sh itself (under load, wait for that one rather than the first logged).
    const failed = await waitFor(() => failures(rt).find((f) => f.hook === 'tools/result' && f.listener === 'dsh:hook result[1] .dsh/hooks/exit1.sh'));
    expect(failed).toMatchObject({ listener: 'dsh:hook result[1] .dsh/hooks/exit1.sh', failed: 'open' });
    expect(failed.message).toContain('exited with code 1');
  }, 60_000);
});

async function waitFor<T>(check: () => T | undefined): Promise<T> {
  for (let i = 0; i < 1200; i++) {
    const v = check();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out waiting');
}
