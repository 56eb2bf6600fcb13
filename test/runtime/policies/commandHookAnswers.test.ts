/**
 * What a command hook's run decides (docs/hooks.md "What a hook answers", "Exit codes and
 * failures", "The order"), judged through the runtime with a scripted {@link HookRunner}: the
 * documented contract of the runner is "any function `({ argv, stdin, timeoutMs }) => outcome`",
 * so each test gives the outcome a hook process would have (its exit code, stdout, stderr, a
 * timeout, a kill, a start failure) and pins what the call gets: allow / deny / ask / block, the
 * result code (POLICY_DENIED, GUARD_DENIED, POST_EXECUTE_BLOCKED, HOOK_FAILED) and the reason the
 * model reads; what the hook reads on stdin; and the deadline it is given (`timeoutMs`, capped by
 * `timeouts.hookMs` in the policy stages). Hostile output (garbage, control characters, huge
 * stderr, answers of the wrong shape) fails closed or reaches the model bounded and visible.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { applyConfig, type PolicyConfig } from '../../../src/runtime/policies/applyConfig.js';
import {
  commandHookField,
  commandHookName,
  compileHook,
  DEFAULT_COMMAND_HOOK_TIMEOUT_MS,
  installCommandHooks,
  type CommandHooksConfig,
  type HookRunner,
  type HookRunOutcome,
  type HookRunRequest,
} from '../../../src/runtime/policies/commandHooks.js';
import type { ApprovalAnswer, ToolResult } from '../../../src/protocol/index.js';
import { PreExecuteHookAnswerSchema } from '../../../src/protocol/hookMessages.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { z } from 'zod';
import { call, fakeBash, pathTool, recordingApproval } from './fixtures.js';

const exited = (code: number | null, stdout = '', stderr = '', extra: { signal?: string | null; note?: string } = {}): HookRunOutcome => ({ kind: 'exited', code, stdout, stderr, ...extra });
const answer = (o: Record<string, unknown>): HookRunOutcome => exited(0, JSON.stringify({ version: 1, ...o }));

/** A runner that answers each run with `respond(request)` and keeps what each run was given. */
function scripted(respond: (req: HookRunRequest, input: Record<string, unknown>) => HookRunOutcome | Promise<HookRunOutcome>) {
  const runs: Array<{ argv: readonly string[]; input: Record<string, unknown>; timeoutMs: number }> = [];
  const runner: HookRunner = async (req) => {
    const input = JSON.parse(req.stdin) as Record<string, unknown>;
    runs.push({ argv: req.argv, input, timeoutMs: req.timeoutMs });
    return respond(req, input);
  };
  return { runner, runs };
}

/** A runtime with a fake bash and `write`, a default question like the CLI's, and the hooks installed by applyConfig. */
function setup(hooks: CommandHooksConfig, runner: HookRunner, o: { answer?: ApprovalAnswer; config?: PolicyConfig; root?: string } = {}) {
  const bash = fakeBash();
  const write = pathTool('write');
  const approval = recordingApproval(o.answer ?? 'allowed-once');
  const rt = createRuntime({ tools: [bash.tool, write.tool], approval: approval.service });
  rt.hooks.on('tools/pre-execute', 'ask-before-changes', () => ({ kind: 'ask', reason: 'the default policy asks' }));
  const remove = applyConfig(rt, { ...o.config, hooks }, { root: o.root ?? '/ws', hookRunner: runner, sessionId: 'session-abc' });
  return { rt, bash, write, asked: approval.asked, remove };
}

const failures = (rt: ReturnType<typeof createRuntime>) => rt.log.events().filter((e) => e.type === 'hook/failed') as Array<{ listener: string; message: string; failed: string; hook: string }>;

async function waitFor<T>(check: () => T | undefined): Promise<T> {
  for (let i = 0; i < 2000; i++) {
    const v = check();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('timed out waiting');
}

const CHECK = ['.dsh/hooks/check.sh'];

describe('names', () => {
  it('a hook is named by stage, index and program; a hook without a program is "?"', () => {
    expect(commandHookName('guard', 2, { command: ['.dsh/hooks/x.sh', '--strict'] })).toBe('dsh:hook guard[2] .dsh/hooks/x.sh');
    expect(commandHookField('postExecute', 1, { command: ['/opt/h'] })).toBe('hooks.postExecute[1] (/opt/h)');
    expect(commandHookName('result', 0, { command: [] })).toBe('dsh:hook result[0] ?');
    expect(commandHookField('preExecute', 0, { command: [] })).toBe('hooks.preExecute[0] (?)');
  });
});

describe('which calls a hook is consulted about (tools, paths)', () => {
  it('tools glob over tool names; default every tool', () => {
    expect(compileHook('preExecute', 0, { command: CHECK }).matches('anything', {})).toBe(true);
    const h = compileHook('preExecute', 0, { command: CHECK, tools: 'git*' });
    expect(h.matches('github', {})).toBe(true);
    expect(h.matches('bash', {})).toBe(false);
  });

  it('paths glob over the path argument relative to the root; a call without a path (or without arguments) does not match; a path outside the workspace always does', () => {
    const h = compileHook('preExecute', 0, { command: CHECK, tools: 'write', paths: 'secrets/**' }, '/ws');
    expect(h.matches('write', { path: 'secrets/key' })).toBe(true);
    expect(h.matches('write', { path: '/ws/secrets/key' })).toBe(true);
    expect(h.matches('write', { path: 'src/a.ts' })).toBe(false);
    expect(h.matches('write', { path: '/ws/src/a.ts' })).toBe(false);
    expect(h.matches('write', { path: '/etc/passwd' })).toBe(true);
    expect(h.matches('write', { path: '../outside' })).toBe(true);
    expect(h.matches('write', { text: 'no path' })).toBe(false);
    expect(h.matches('write', undefined)).toBe(false);
    expect(h.matches('write', null)).toBe(false);
    expect(h.matches('write', 'secrets/key')).toBe(false);
    expect(h.matches('read', { path: 'secrets/key' })).toBe(false);
  });
});

describe('preExecute answers', () => {
  it('allow: the call runs without the question the default policy would ask', async () => {
    const { runner } = scripted(() => answer({ decision: 'allow' }));
    const { rt, bash, asked } = setup({ preExecute: [{ command: CHECK }] }, runner);
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.isError).toBe(false);
    // The result says which hook let it run (dsh policy replay shows it), as it does for a deny.
    expect(r.decision).toEqual({ stage: 'pre-execute', outcome: 'allow', by: 'dsh:hook preExecute[0] .dsh/hooks/check.sh', rule: 'hooks.preExecute[0] (.dsh/hooks/check.sh)' });
    expect(bash.ran).toEqual(['ls']);
    expect(asked).toEqual([]);
  });

  it('deny: POLICY_DENIED with the reason, naming the hook as the rule', async () => {
    const { runner } = scripted(() => answer({ decision: 'deny', reason: 'not on Fridays' }));
    const { rt, bash } = setup({ preExecute: [{ command: CHECK }] }, runner);
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain('not on Fridays (hook hooks.preExecute[0] (.dsh/hooks/check.sh))');
    expect(r.decision).toEqual({ stage: 'pre-execute', outcome: 'deny', by: 'dsh:hook preExecute[0] .dsh/hooks/check.sh', rule: 'hooks.preExecute[0] (.dsh/hooks/check.sh)' });
    expect(bash.ran).toEqual([]);
  });

  it('ask: the approver is asked with the hook\'s reason, or one naming the hook when it gave none', async () => {
    const withReason = setup({ preExecute: [{ command: CHECK }] }, scripted(() => answer({ decision: 'ask', reason: 'a person should look' })).runner);
    await call(withReason.rt, 'bash', { command: 'ls' });
    expect(withReason.asked.map((a) => a.reason)).toEqual(['a person should look']);
    const bare = setup({ preExecute: [{ command: CHECK }] }, scripted(() => answer({ decision: 'ask' })).runner, { answer: 'denied' });
    const r = await call(bare.rt, 'bash', { command: 'ls' });
    expect(bare.asked.map((a) => a.reason)).toEqual(['hook hooks.preExecute[0] (.dsh/hooks/check.sh) asks']);
    expect(r.error?.code).toBe('APPROVAL_DENIED');
    expect(bare.bash.ran).toEqual([]);
  });

  it('next hands over to the next listener (here the default question)', async () => {
    const { rt, asked, bash } = setup({ preExecute: [{ command: CHECK }] }, scripted(() => answer({ decision: 'next' })).runner);
    expect((await call(rt, 'bash', { command: 'ls' })).isError).toBe(false);
    expect(asked.map((a) => a.reason)).toEqual(['the default policy asks']);
    expect(bash.ran).toEqual(['ls']);
  });

  it('hooks run in config order: the first that decides wins', async () => {
    const { runner, runs } = scripted((req) => (req.argv[0] === 'first' ? answer({ decision: 'next' }) : answer({ decision: 'deny', reason: 'second says no' })));
    const { rt } = setup({ preExecute: [{ command: ['first'] }, { command: ['second'] }] }, runner);
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.content).toContain('second says no (hook hooks.preExecute[1] (second))');
    expect(runs.map((x) => x.argv[0])).toEqual(['first', 'second']);
  });

  it('a hook whose tools/paths do not match the call is not run', async () => {
    const { runner, runs } = scripted(() => answer({ decision: 'deny', reason: 'no' }));
    const { rt, bash } = setup({ preExecute: [{ command: CHECK, tools: 'write' }] }, runner);
    expect((await call(rt, 'bash', { command: 'ls' })).isError).toBe(false);
    expect(runs).toEqual([]);
    expect(bash.ran).toEqual(['ls']);
  });

  it("applyConfig's remover takes the preExecute hooks away", async () => {
    const { runner } = scripted(() => answer({ decision: 'deny', reason: 'no' }));
    const { rt, remove, bash } = setup({ preExecute: [{ command: CHECK }] }, runner);
    expect((await call(rt, 'bash', { command: 'a' })).error?.code).toBe('POLICY_DENIED');
    remove();
    expect((await call(rt, 'bash', { command: 'b' })).isError).toBe(false);
    expect(bash.ran).toEqual(['b']);
  });
});

describe('what a hook reads and how long it may take', () => {
  it('the input: version, stage, hook, tool, frozen args, session, turn, step and call ids; the argv as configured', async () => {
    const { runner, runs } = scripted(() => answer({ decision: 'next' }));
    const { rt } = setup({ preExecute: [{ command: ['.dsh/hooks/check.sh', '--strict', 'x y'] }] }, runner);
    await rt.runCall({ callId: 'call-7-0', toolName: 'write', input: { path: 'src/a.ts', text: 'x' } }, { turnId: 'turn-7', stepIndex: 0 }).result;
    expect(runs).toEqual([
      {
        argv: ['.dsh/hooks/check.sh', '--strict', 'x y'],
        input: { version: 1, stage: 'preExecute', hook: 'hooks.preExecute[0] (.dsh/hooks/check.sh)', tool: 'write', args: { path: 'src/a.ts', text: 'x' }, sessionId: 'session-abc', turnId: 'turn-7', stepIndex: 0, callId: 'call-7-0' },
        timeoutMs: DEFAULT_COMMAND_HOOK_TIMEOUT_MS,
      },
    ]);
  });

  it('a lone call without a session: no sessionId, turnId or stepIndex keys at all', async () => {
    const { runner, runs } = scripted(() => answer({ decision: 'next' }));
    const rt = createRuntime({ tools: [fakeBash().tool] });
    installCommandHooks(rt, { preExecute: [{ command: CHECK }] }, { runner });
    await call(rt, 'bash', { command: 'ls' });
    expect(Object.keys(runs[0]!.input).sort()).toEqual(['args', 'callId', 'hook', 'stage', 'tool', 'version']);
  });

  it('the default deadline is 30 s; an entry\'s own timeoutMs is used when shorter than timeouts.hookMs, capped to it when longer', async () => {
    expect(DEFAULT_COMMAND_HOOK_TIMEOUT_MS).toBe(30_000);
    const { runner, runs } = scripted(() => answer({ decision: 'next' }));
    const { rt } = setup(
      { preExecute: [{ command: ['short'], timeoutMs: 1_500 }, { command: ['long'], timeoutMs: 600_000 }, { command: ['default'] }] },
      runner,
      { config: { timeouts: { hookMs: 20_000 } } },
    );
    await call(rt, 'bash', { command: 'ls' });
    expect(runs.map((r) => [r.argv[0], r.timeoutMs])).toEqual([
      ['short', 1_500],
      ['long', 20_000],
      ['default', 20_000],
    ]);
  });

  it('installed without a stage timeout, an entry keeps its own deadline, however long', async () => {
    const { runner, runs } = scripted(() => answer({ decision: 'next' }));
    const rt = createRuntime({ tools: [fakeBash().tool], limits: { hookTimeoutMs: 900_000 } });
    installCommandHooks(rt, { preExecute: [{ command: ['long'], timeoutMs: 600_000 }, { command: ['default'] }] }, { runner });
    await call(rt, 'bash', { command: 'ls' });
    expect(runs.map((r) => r.timeoutMs)).toEqual([600_000, 30_000]);
  });
});

describe('what installCommandHooks registers', () => {
  it('front: the result hooks\' capture first, then the guard hooks; preExecute: the preExecute hooks in config order', () => {
    const { runner } = scripted(() => answer({ decision: 'next' }));
    const all = installCommandHooks(createRuntime(), { guard: [{ command: ['g0'] }, { command: ['g1'] }], preExecute: [{ command: ['p0'] }, { command: ['p1'] }], result: [{ command: ['r0'] }], postExecute: [{ command: ['q0'] }] }, { runner });
    expect(all.front).toEqual(['dsh:hook result (call capture)', 'dsh:hook guard[0] g0', 'dsh:hook guard[1] g1']);
    expect(all.preExecute).toEqual(['dsh:hook preExecute[0] p0', 'dsh:hook preExecute[1] p1']);
    const noResult = installCommandHooks(createRuntime(), { guard: [{ command: ['g0'] }], postExecute: [{ command: ['q0'] }] }, { runner });
    expect(noResult.front).toEqual(['dsh:hook guard[0] g0']);
    expect(noResult.preExecute).toEqual([]);
    const none = installCommandHooks(createRuntime(), {}, { runner });
    expect([none.front, none.preExecute]).toEqual([[], []]);
  });
});

describe('exit codes and failures (fail closed)', () => {
  const failed = async (outcome: HookRunOutcome | (() => never)) => {
    const runner: HookRunner = async () => (typeof outcome === 'function' ? outcome() : outcome);
    const { rt, bash } = setup({ preExecute: [{ command: CHECK }] }, runner);
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(bash.ran).toEqual([]);
    return r;
  };
  const expectFailed = (r: ToolResult, message: string) => {
    expect(r.error?.code).toBe('HOOK_FAILED');
    expect(r.error?.message).toContain('dsh:hook preExecute[0] .dsh/hooks/check.sh');
    expect(r.error?.message).toContain(message);
  };

  it('exit 2 denies with stderr (one line, trimmed) as the reason; with nothing on stderr, a reason naming the program', async () => {
    const r = await failed(exited(2, 'ignored', '  the build\n\tdirectory   is off limits \n'));
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain('the build directory is off limits (hook hooks.preExecute[0] (.dsh/hooks/check.sh))');
    const silent = await failed(exited(2, '', ' \n '));
    expect(silent.error?.code).toBe('POLICY_DENIED');
    expect(silent.content).toContain('.dsh/hooks/check.sh exited with code 2 (no reason on stderr)');
  });

  it('an exit-2 reason of control characters and 20,000 characters reaches the model visible, on one line, bounded', async () => {
    const r = await failed(exited(2, '', `\u001b]0;pwned\u0007\u001b[2J${'x'.repeat(20_000)}`));
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain('\\u001b]0;pwned\\u0007');
    expect(r.content).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(r.content.length).toBeLessThan(5_000);
    expect(r.content).toContain('x…');
  });

  it('an exit-2 reason of a few thousand characters reaches the model whole', async () => {
    const reason = `${'w'.repeat(3_000)} end`;
    const r = await failed(exited(2, '', reason));
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain(`${reason} (hook hooks.preExecute[0] (.dsh/hooks/check.sh))`);
  });

  it('any other exit code: HOOK_FAILED saying the code and stderr (one line, at most 300 characters) and the runner\'s note', async () => {
    expectFailed(await failed(exited(1, '', 'something\nbroke\n')), 'exited with code 1: something broke');
    expectFailed(await failed(exited(3, '{"version":1,"decision":"allow"}', '')), 'exited with code 3');
    const long = await failed(exited(1, '', 'y'.repeat(1_000)));
    expectFailed(long, `exited with code 1: ${'y'.repeat(300)}…`);
    expect(long.error?.message).not.toContain('y'.repeat(301));
    expectFailed(await failed(exited(127, '', 'not found', { note: '(the runner hid $HOME)' })), 'exited with code 127: not found (the runner hid $HOME)');
    expectFailed(await failed(exited(126, '', '', { note: 'a note alone' })), 'exited with code 126: a note alone');
  });

  it('stderr of exactly 300 characters is kept whole (nothing cut, no ellipsis); the failure is a CommandHookError', async () => {
    const r = await failed(exited(1, '', 'q'.repeat(300)));
    expectFailed(r, `CommandHookError: exited with code 1: ${'q'.repeat(300)}`);
    expect(r.error?.message).not.toContain('…');
  });

  it('exit 0 with a valid answer on stdout is the answer even with noise on stderr', async () => {
    const r = await failed(exited(0, '{"version":1,"decision":"deny","reason":"by answer"}', 'warning: something'));
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain('by answer');
  });

  it('killed by a signal: HOOK_FAILED naming the signal (or "a signal")', async () => {
    expectFailed(await failed(exited(null, '', '', { signal: 'SIGKILL' })), 'was killed by SIGKILL');
    expectFailed(await failed(exited(null, '', 'oom')), 'was killed by a signal: oom');
  });

  it('a timeout: HOOK_FAILED (TIMEOUT) with the deadline it had, even when it printed an answer first', async () => {
    const runner: HookRunner = async () => ({ kind: 'timeout', stdout: '{"version":1,"decision":"allow"}', stderr: '' });
    const { rt, bash } = setup({ preExecute: [{ command: CHECK, timeoutMs: 4_321 }] }, runner);
    const r = await call(rt, 'bash', { command: 'ls' });
    expectFailed(r, 'TIMEOUT: no answer within 4321 ms (the hook and every process it started were killed)');
    expect(bash.ran).toEqual([]);
  });

  it('a hook that cannot be started: HOOK_FAILED saying why (one line, control characters shown)', async () => {
    expectFailed(await failed(() => { throw new Error('spawn ENOENT\n\u001b[31mred'); }), 'could not be started: spawn ENOENT \\u001b[31mred');
    expectFailed(await failed(() => { throw 'a plain string'; }), 'could not be started: a plain string');
  });

  it('stdout that is not one JSON document: HOOK_FAILED quoting it, one line, cut at 120 characters', async () => {
    expectFailed(await failed(exited(0, 'sure, go ahead!\n')), 'exited 0 but its stdout is not one JSON document: "sure, go ahead!"');
    expectFailed(await failed(exited(0, '{"version":1,"decision":"allow"}\n{"version":1,"decision":"allow"}')), 'not one JSON document');
    expectFailed(await failed(exited(0, '')), 'not one JSON document: ""');
    const long = await failed(exited(0, 'z'.repeat(500)));
    expectFailed(long, `not one JSON document: "${'z'.repeat(120)}…"`);
  });

  it('an answer of the wrong shape: HOOK_FAILED naming the field and the expected form', async () => {
    expectFailed(await failed(answer({ decision: 'maybe' })), 'answered an invalid preExecute answer (decision: ');
    expectFailed(await failed(answer({ decision: 'deny', reason: '' })), 'answered an invalid preExecute answer (reason: ');
    expectFailed(await failed(exited(0, '{"version":2,"decision":"allow"}')), 'answered an invalid preExecute answer (version: ');
    const r = await failed(exited(0, '[1,2]'));
    // No field to name: zod's message alone, right after the parenthesis.
    const issue = PreExecuteHookAnswerSchema.safeParse([1, 2]).error!.issues[0]!;
    expectFailed(r, `answered an invalid preExecute answer (${issue.message}); expected`);
    expect(r.error?.message).toContain('expected {"version":1,"decision":…} (docs/hooks.md)');
    expect(r.error?.message).not.toContain('(: ');
    expectFailed(await failed(answer({ decision: 'allow', extra: 1 })), 'answered an invalid preExecute answer');
  });

  it('an answer that tries to rewrite the arguments: HOOK_FAILED, whatever it decided', async () => {
    expectFailed(await failed(answer({ decision: 'allow', updatedInput: { command: 'rm -rf /' } })), `tried to rewrite the call's arguments ("updatedInput" in its answer): arguments are frozen (SPEC §2); a hook can deny, ask or block, never rewrite them`);
    expectFailed(await failed(answer({ decision: 'next', hookSpecificOutput: { args: {} } })), '("hookSpecificOutput.args" in its answer)');
  });
});

describe('guard hooks', () => {
  it('deny: GUARD_DENIED naming the guard hook; a permission allow cannot skip it and nobody is asked', async () => {
    const { runner } = scripted((_req, input) => (JSON.stringify(input.args).includes('rm ') ? answer({ decision: 'deny', reason: 'rm is not for agents' }) : answer({ decision: 'next' })));
    const { rt, bash, asked } = setup({ guard: [{ command: CHECK }] }, runner, { config: { permissions: [{ tool: 'bash', decision: 'allow' }] } });
    const r = await call(rt, 'bash', { command: 'rm -rf build' });
    expect(r.error?.code).toBe('GUARD_DENIED');
    expect(r.content).toContain('rm is not for agents (guard hook hooks.guard[0] (.dsh/hooks/check.sh))');
    expect(r.decision).toEqual({ stage: 'guard', outcome: 'deny', by: 'dsh:hook guard[0] .dsh/hooks/check.sh', rule: 'hooks.guard[0] (.dsh/hooks/check.sh)' });
    expect(asked).toEqual([]);
    expect((await call(rt, 'bash', { command: 'ls' })).isError).toBe(false);
    expect(bash.ran).toEqual(['ls']);
  });

  it('next: the call goes on through the rest of pre-execute (the default question is asked)', async () => {
    const { runner } = scripted(() => answer({ decision: 'next' }));
    const { rt, bash, asked } = setup({ guard: [{ command: CHECK }] }, runner);
    expect((await call(rt, 'bash', { command: 'ls' })).isError).toBe(false);
    expect(asked.map((a) => a.reason)).toEqual(['the default policy asks']);
    expect(bash.ran).toEqual(['ls']);
  });

  it('a guard hook runs before every other pre-execute listener, a preExecute hook after the built-in rules', async () => {
    const { runner, runs } = scripted(() => answer({ decision: 'next' }));
    const { rt } = setup({ preExecute: [{ command: ['pre'] }], guard: [{ command: ['guard'] }] }, runner);
    await call(rt, 'bash', { command: 'ls' });
    expect(runs.map((r) => r.argv[0])).toEqual(['guard', 'pre']);
    expect(runs.map((r) => r.input.stage)).toEqual(['guard', 'preExecute']);
  });

  it('exit 2 is GUARD_DENIED with stderr as the reason; an allow answer is invalid (a guard never allows) and fails closed', async () => {
    const two = setup({ guard: [{ command: CHECK }] }, async () => exited(2, '', 'force-pushing is not allowed'));
    const r = await call(two.rt, 'bash', { command: 'git push -f' });
    expect(r.error?.code).toBe('GUARD_DENIED');
    expect(r.content).toContain('force-pushing is not allowed (guard hook hooks.guard[0] (.dsh/hooks/check.sh))');
    const allow = setup({ guard: [{ command: CHECK }] }, async () => answer({ decision: 'allow' }));
    const a = await call(allow.rt, 'bash', { command: 'ls' });
    expect(a.error?.code).toBe('HOOK_FAILED');
    expect(a.error?.message).toContain('answered an invalid guard answer');
    expect(allow.bash.ran).toEqual([]);
  });

  it('a guard hook whose tools do not match is not run, and the call is not held up at the guard', async () => {
    const { runner, runs } = scripted(() => answer({ decision: 'deny', reason: 'no' }));
    const { rt, bash } = setup({ guard: [{ command: CHECK, tools: 'write' }] }, runner);
    expect((await call(rt, 'bash', { command: 'ls' })).isError).toBe(false);
    expect(runs).toEqual([]);
    expect(bash.ran).toEqual(['ls']);
  });

  it('a call that reaches the guard without a verdict is judged by the hook before its body: deny is GUARD_DENIED, next lets it run', async () => {
    const { runner, runs } = scripted((_req, input) => (JSON.stringify(input.args).includes('rm ') ? answer({ decision: 'deny', reason: 'rm is not for agents' }) : answer({ decision: 'next' })));
    const { rt, bash } = setup({ guard: [{ command: CHECK }] }, runner);
    rt.hooks.on('tools/pre-execute', 'allow-everything', () => ({ kind: 'allow' }));
    rt.hooks.order('tools/pre-execute', ['allow-everything']);
    const r = await call(rt, 'bash', { command: 'rm -rf build' });
    expect(r.error?.code).toBe('GUARD_DENIED');
    expect(r.content).toContain('denied by guard "dsh:hook guard[0] .dsh/hooks/check.sh": rm is not for agents (guard hook hooks.guard[0] (.dsh/hooks/check.sh))');
    expect((await call(rt, 'bash', { command: 'ls' })).isError).toBe(false);
    expect(bash.ran).toEqual(['ls']);
    expect(runs.map((x) => x.input.stage)).toEqual(['guard', 'guard']);
  });

  it('without a verdict, a call the hook does not match is not judged at all', async () => {
    const { runner, runs } = scripted(() => answer({ decision: 'deny', reason: 'no' }));
    const { rt, bash } = setup({ guard: [{ command: CHECK, tools: 'write' }] }, runner);
    rt.hooks.on('tools/pre-execute', 'allow-everything', () => ({ kind: 'allow' }));
    rt.hooks.order('tools/pre-execute', ['allow-everything']);
    expect((await call(rt, 'bash', { command: 'ls' })).isError).toBe(false);
    expect(runs).toEqual([]);
    expect(bash.ran).toEqual(['ls']);
  });

  it('the guard hook\'s deadline in the execute stage is capped like in pre-execute', async () => {
    const { runner, runs } = scripted(() => answer({ decision: 'next' }));
    const { rt } = setup({ guard: [{ command: CHECK, timeoutMs: 90_000 }] }, runner, { config: { timeouts: { hookMs: 12_000 } } });
    rt.hooks.on('tools/pre-execute', 'allow-everything', () => ({ kind: 'allow' }));
    rt.hooks.order('tools/pre-execute', ['allow-everything']);
    await call(rt, 'bash', { command: 'ls' });
    expect(runs.map((r) => r.timeoutMs)).toEqual([12_000]);
  });

  it('a failing guard hook in the execute stage fails the call closed (HOOK_FAILED), the body never runs', async () => {
    const { rt, bash } = setup({ guard: [{ command: CHECK }] }, async () => exited(1, '', 'crashed'));
    rt.hooks.on('tools/pre-execute', 'allow-everything', () => ({ kind: 'allow' }));
    rt.hooks.order('tools/pre-execute', ['allow-everything']);
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.error?.code).toBe('HOOK_FAILED');
    expect(r.error?.message).toContain('exited with code 1: crashed');
    expect(bash.ran).toEqual([]);
  });

  it('the remover leaves the guard hooks in place (guards are append-only)', async () => {
    const { runner } = scripted(() => answer({ decision: 'deny', reason: 'never' }));
    const { rt, remove, bash } = setup({ guard: [{ command: CHECK }] }, runner);
    remove();
    expect((await call(rt, 'bash', { command: 'ls' })).error?.code).toBe('GUARD_DENIED');
    expect(bash.ran).toEqual([]);
  });
});

describe('postExecute hooks', () => {
  it('they read the result so far: content, value and metadata', async () => {
    const { runner, runs } = scripted(() => answer({ decision: 'accept' }));
    const { rt } = setup({ postExecute: [{ command: CHECK }] }, runner);
    const r = await call(rt, 'write', { path: 'a.txt' });
    expect(r.isError).toBe(false);
    expect(r.content).toBe('write a.txt');
    expect(runs[0]!.input).toMatchObject({ stage: 'postExecute', tool: 'write', args: { path: 'a.txt' }, result: { content: 'write a.txt', value: 'write a.txt', metadata: {} } });
  });

  it('accept with content replaces the display (the value is kept); block is POST_EXECUTE_BLOCKED with the feedback', async () => {
    const accept = setup({ postExecute: [{ command: CHECK }] }, async () => answer({ decision: 'accept', content: '[redacted]' }));
    const r = await call(accept.rt, 'write', { path: 'secret.txt' });
    expect(r.content).toBe('[redacted]');
    expect(r.value).toBe('write secret.txt');
    const block = setup({ postExecute: [{ command: CHECK }] }, async () => answer({ decision: 'block', feedback: 'that output leaks a token' }));
    const b = await call(block.rt, 'write', { path: 'a' });
    expect(b.error?.code).toBe('POST_EXECUTE_BLOCKED');
    expect(b.content).toContain('that output leaks a token');
    expect(b.decision).toEqual({ stage: 'post-execute', outcome: 'block', by: 'dsh:hook postExecute[0] .dsh/hooks/check.sh' });
    expect(block.write.ran).toEqual(['a']);
  });

  it('exit 2 blocks with stderr as the feedback; a failure is HOOK_FAILED', async () => {
    const two = setup({ postExecute: [{ command: CHECK }] }, async () => exited(2, '', 'leaks a key'));
    const r = await call(two.rt, 'write', { path: 'a' });
    expect(r.error?.code).toBe('POST_EXECUTE_BLOCKED');
    expect(r.content).toContain('leaks a key');
    const bad = setup({ postExecute: [{ command: CHECK }] }, async () => answer({ decision: 'allow' }));
    const f = await call(bad.rt, 'write', { path: 'a' });
    expect(f.error?.code).toBe('HOOK_FAILED');
    expect(f.error?.message).toContain('answered an invalid postExecute answer');
  });

  it('only calls it matches are run past it; its deadline is capped by timeouts.hookMs', async () => {
    const { runner, runs } = scripted(() => answer({ decision: 'block', feedback: 'no' }));
    const { rt } = setup({ postExecute: [{ command: CHECK, tools: 'write', timeoutMs: 50_000 }] }, runner, { config: { timeouts: { hookMs: 7_000 } } });
    expect((await call(rt, 'bash', { command: 'ls' })).isError).toBe(false);
    expect((await call(rt, 'write', { path: 'a' })).error?.code).toBe('POST_EXECUTE_BLOCKED');
    expect(runs.map((r) => [r.input.tool, r.timeoutMs])).toEqual([['write', 7_000]]);
  });

  it('the remover takes them away', async () => {
    const { rt, remove } = setup({ postExecute: [{ command: CHECK }] }, async () => answer({ decision: 'block', feedback: 'no' }));
    remove();
    expect((await call(rt, 'write', { path: 'a' })).isError).toBe(false);
  });
});

describe('result hooks (observers, fail open)', () => {
  it('they read the final result with the call\'s arguments and place, even for a call a guard denied', async () => {
    const seen = scripted((_req, input) => (input.stage === 'guard' ? answer({ decision: 'deny', reason: 'guarded' }) : exited(0, '')));
    const { rt } = setup({ guard: [{ command: ['guard'], tools: 'write' }], result: [{ command: ['observe'] }] }, seen.runner);
    await rt.runCall({ callId: 'c-1', toolName: 'bash', input: { command: 'ls' } }, { turnId: 't-1', stepIndex: 3 }).result;
    await rt.runCall({ callId: 'c-2', toolName: 'write', input: { path: 'x' } }, { turnId: 't-1', stepIndex: 4 }).result;
    const results = await waitFor(() => {
      const r = seen.runs.filter((x) => x.input.stage === 'result');
      return r.length === 2 ? r : undefined;
    });
    expect(results[0]!.input).toEqual({
      version: 1,
      stage: 'result',
      hook: 'hooks.result[0] (observe)',
      tool: 'bash',
      args: { command: 'ls' },
      sessionId: 'session-abc',
      turnId: 't-1',
      stepIndex: 3,
      callId: 'c-1',
      result: { isError: false, content: 'ran', value: 'ran', metadata: {} },
    });
    expect(results[1]!.input).toMatchObject({
      tool: 'write',
      args: { path: 'x' },
      turnId: 't-1',
      stepIndex: 4,
      callId: 'c-2',
      result: { isError: true, error: { name: expect.any(String), code: 'GUARD_DENIED', message: expect.stringContaining('guarded') } },
    });
  });

  it('a call that never validated: the result hook reads no args', async () => {
    const { runner, runs } = scripted(() => exited(0, ''));
    const { rt } = setup({ result: [{ command: ['observe'] }] }, runner);
    await call(rt, 'bash', { wrong: 1 });
    const [r] = await waitFor(() => (runs.length === 1 ? runs : undefined));
    expect(r!.input).not.toHaveProperty('args');
    expect(r!.input.callId).toMatch(/^p-/);
    expect((r!.input.result as { isError: boolean }).isError).toBe(true);
  });

  it('a failing, timing-out or exit-2 observer is logged (failed: open) and the result stands', async () => {
    const outcomes: Record<string, HookRunOutcome> = { crash: exited(1, '', 'boom'), slow: { kind: 'timeout', stdout: '', stderr: '' }, two: exited(2, '', 'I object') };
    const { rt } = setup({ result: [{ command: ['crash'] }, { command: ['slow'], timeoutMs: 2_000 }, { command: ['two'] }] }, async (req) => outcomes[req.argv[0]!]!);
    const r = await call(rt, 'bash', { command: 'ls' });
    expect(r.isError).toBe(false);
    expect(r.content).toBe('ran');
    const logged = await waitFor(() => (failures(rt).length === 3 ? failures(rt) : undefined));
    expect(logged.map((f) => [f.listener, f.failed])).toEqual([
      ['dsh:hook result[0] crash', 'open'],
      ['dsh:hook result[1] slow', 'open'],
      ['dsh:hook result[2] two', 'open'],
    ]);
    expect(logged[0]!.message).toContain('exited with code 1: boom');
    expect(logged[1]!.message).toContain('TIMEOUT: no answer within 2000 ms');
    expect(logged[2]!.message).toContain('exited with code 2 (a result observer cannot block): I object');
  });

  it('every result hook reads the call, not only the first; one whose tools do not match is not run', async () => {
    const { runner, runs } = scripted(() => exited(0, ''));
    const { rt } = setup({ result: [{ command: ['a'] }, { command: ['b'], tools: 'write' }, { command: ['c'] }] }, runner);
    await call(rt, 'bash', { command: 'ls' });
    const done = await waitFor(() => (runs.length === 2 ? runs : undefined));
    expect(done.map((r) => [r.argv[0], r.input.args])).toEqual([
      ['a', { command: 'ls' }],
      ['c', { command: 'ls' }],
    ]);
  });

  it('a result hook with paths judges by the call\'s path argument', async () => {
    const { runner, runs } = scripted(() => exited(0, ''));
    const { rt } = setup({ result: [{ command: ['watch'], paths: 'secrets/**' }] }, runner, { answer: 'allowed-once' });
    await call(rt, 'write', { path: 'src/a.ts' });
    await call(rt, 'write', { path: 'secrets/key' });
    await waitFor(() => (runs.length === 1 ? runs : undefined));
    await new Promise((r) => setTimeout(r, 50));
    expect(runs.map((r) => r.input.args)).toEqual([{ path: 'secrets/key' }]);
  });

  it('a call whose pre-execute ended before the capture (a listener ordered first allowed it): the result hook still reads its arguments', async () => {
    const { runner, runs } = scripted(() => exited(0, ''));
    const { rt } = setup({ result: [{ command: ['observe'] }] }, runner);
    rt.hooks.on('tools/pre-execute', 'allow-everything', () => ({ kind: 'allow' }));
    rt.hooks.order('tools/pre-execute', ['allow-everything']);
    await rt.runCall({ callId: 'c-9', toolName: 'bash', input: { command: 'ls' } }, { turnId: 't-9', stepIndex: 1 }).result;
    const [r] = await waitFor(() => (runs.length === 1 ? runs : undefined));
    expect(r!.input).toMatchObject({ args: { command: 'ls' }, turnId: 't-9', stepIndex: 1, callId: 'c-9' });
  });

  it('the result\'s metadata and value reach post-execute and result hooks', async () => {
    const { runner, runs } = scripted((_req, input) => (input.stage === 'postExecute' ? answer({ decision: 'accept' }) : exited(0, '')));
    const probe = defineTool({ name: 'probe', input: z.object({}), execute: () => ({ code: 3 }), toMetadata: (v) => ({ exitCode: v.code }) });
    const rt = createRuntime({ tools: [probe] });
    applyConfig(rt, { hooks: { postExecute: [{ command: ['post'] }], result: [{ command: ['result'] }] } }, { hookRunner: runner });
    await call(rt, 'probe', {});
    const done = await waitFor(() => (runs.length === 2 ? runs : undefined));
    expect(done[0]!.input.result).toMatchObject({ value: { code: 3 }, metadata: { exitCode: 3 } });
    expect(done[1]!.input.result).toMatchObject({ isError: false, value: { code: 3 }, metadata: { exitCode: 3 } });
  });

  it('a call id used again by a call that never validated: the result hook reads no args of the earlier call', async () => {
    const { runner, runs } = scripted(() => exited(0, ''));
    const { rt } = setup({ result: [{ command: ['a'] }, { command: ['b'] }] }, runner);
    await rt.runCall({ callId: 'same', toolName: 'bash', input: { command: 'ls' } }).result;
    await waitFor(() => (runs.length === 2 ? runs : undefined));
    await rt.runCall({ callId: 'same', toolName: 'bash', input: { nonsense: true } }).result;
    const done = await waitFor(() => (runs.length === 4 ? runs : undefined));
    expect(done.map((r) => [r.argv[0], r.input.args])).toEqual([
      ['a', { command: 'ls' }],
      ['b', { command: 'ls' }],
      ['a', undefined],
      ['b', undefined],
    ]);
  });

  it('their deadline is their own (default 30 s): timeouts.hookMs bounds the policy stages only', async () => {
    const { runner, runs } = scripted(() => exited(0, ''));
    const { rt } = setup({ result: [{ command: ['own'], timeoutMs: 45_000 }, { command: ['default'] }] }, runner, { config: { timeouts: { hookMs: 1_000 } } });
    await call(rt, 'bash', { command: 'ls' });
    const done = await waitFor(() => (runs.length === 2 ? runs : undefined));
    expect(done.map((r) => r.timeoutMs)).toEqual([45_000, 30_000]);
  });

  it('after the remover, result hooks no longer run', async () => {
    const { runner, runs } = scripted(() => exited(0, ''));
    const { rt, remove } = setup({ result: [{ command: ['observe'] }] }, runner);
    remove();
    await call(rt, 'bash', { command: 'ls' });
    await new Promise((r) => setTimeout(r, 50));
    expect(runs).toEqual([]);
  });
});
