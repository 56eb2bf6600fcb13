/**
 * Issue 26 item 4: every result of a denied, asked, blocked or failed-closed call names who
 * decided (`result.decision`: the stage, the outcome, the listener, guard or hook by its
 * registered name, and the rule inside it), in the `tool/result` the log stores.
 */
import { describe, expect, it } from 'vitest';
import type { ToolResult } from '../../../src/protocol/index.js';
import type { ApprovalService } from '../../../src/runtime/pipeline/index.js';
import { z } from 'zod';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { applyConfig } from '../../../src/runtime/policies/applyConfig.js';
import { call, fakeBash, pathTool, recordingApproval } from '../policies/fixtures.js';
import { abortableBody } from './harness.js';

function logged(rt: ReturnType<typeof createRuntime>, callId: string): ToolResult | undefined {
  for (const e of rt.log.events()) if (e.type === 'tool/result' && e.callId === callId) return e.result;
  return undefined;
}

describe('decision provenance', () => {
  it('a permission rule that denies: pre-execute, deny, dsh:permissions, its index and globs (in the logged result too)', async () => {
    const write = pathTool('write');
    const rt = createRuntime({ tools: [write.tool] });
    applyConfig(rt, { permissions: [{ tool: 'read', decision: 'allow' }, { tool: 'write', path: '.env*', decision: 'deny' }] });
    const r = await call(rt, 'write', { path: '.env', text: 'x' });
    expect(r.isError && r.error.code).toBe('POLICY_DENIED');
    expect(r.decision).toEqual({ stage: 'pre-execute', outcome: 'deny', by: 'dsh:permissions', rule: 'permissions[1] (tool "write", path ".env*")' });
    expect(logged(rt, r.callId)?.decision).toEqual(r.decision);
    expect(r.content).not.toContain('permissions[1]'); // the rule is for people: the model sees the reason
    expect(write.ran).toEqual([]);
  });

  it('a bash deny pattern: decided before any question (pre-execute, deny, dsh:bash-commands), or by the guard (guard, deny, dsh:bash-deny) behind a listener that allowed; the rule is bash.deny[index] /pattern/', async () => {
    const bash = fakeBash();
    const rt = createRuntime({ tools: [bash.tool] });
    applyConfig(rt, { bash: { deny: ['^git push', '^rm\\s'] } });
    const r = await call(rt, 'bash', { command: 'ls && rm -r build' });
    expect(r.isError && r.error.code).toBe('POLICY_DENIED');
    expect(r.decision).toEqual({ stage: 'pre-execute', outcome: 'deny', by: 'dsh:bash-commands', rule: 'bash.deny[1] /^rm\\s/' });
    // A listener ordered ahead of the rules that allows: the guard still denies, and names itself.
    rt.hooks.on('tools/pre-execute', 'allow-everything', () => ({ kind: 'allow' }));
    rt.hooks.order('tools/pre-execute', ['allow-everything']);
    const g = await call(rt, 'bash', { command: 'ls && rm -r build' });
    expect(g.isError && g.error.code).toBe('GUARD_DENIED');
    expect(g.decision).toEqual({ stage: 'guard', outcome: 'deny', by: 'dsh:bash-deny', rule: 'bash.deny[1] /^rm\\s/' });
    expect(bash.ran).toEqual([]);
  });

  it('an asked call names its final decider: the person who allowed or denied it, or the memory of an allowed-always (issue 32 item 3)', async () => {
    for (const answer of ['allowed-once', 'denied'] as const) {
      const write = pathTool('write');
      const approval = recordingApproval(answer);
      const rt = createRuntime({ tools: [write.tool], approval: approval.service });
      applyConfig(rt, { permissions: [{ tool: 'write', decision: 'ask' }] });
      const r = await call(rt, 'write', { path: 'a.txt', text: 'x' });
      expect(r.isError, answer).toBe(answer === 'denied');
      expect(r.decision, answer).toEqual({ stage: 'approval', outcome: answer === 'denied' ? 'deny' : 'allow', by: 'the person' });
    }
    const write = pathTool('write');
    const approval = recordingApproval('allowed-always');
    const rt = createRuntime({ tools: [write.tool], approval: approval.service });
    applyConfig(rt, { permissions: [{ tool: 'write', decision: 'ask' }] });
    expect((await call(rt, 'write', { path: 'a.txt', text: 'x' })).decision).toEqual({ stage: 'approval', outcome: 'allow', by: 'the person' });
    expect((await call(rt, 'write', { path: 'a.txt', text: 'x' })).decision).toEqual({ stage: 'approval', outcome: 'allow', by: 'an earlier allowed-always' });
    expect(approval.asked).toHaveLength(1);
  });

  it('an allowed-always covers questions only: the same call later allowed by a listener names that listener, and nobody is recorded as answering', async () => {
    const write = pathTool('write');
    const approval = recordingApproval('allowed-always');
    const rt = createRuntime({ tools: [write.tool], approval: approval.service });
    applyConfig(rt, { permissions: [{ tool: 'write', decision: 'ask' }] });
    expect((await call(rt, 'write', { path: 'a.txt', text: 'x' })).decision).toEqual({ stage: 'approval', outcome: 'allow', by: 'the person' });
    rt.hooks.on('tools/pre-execute', 'allow-writes', () => ({ kind: 'allow' }));
    rt.hooks.order('tools/pre-execute', ['allow-writes']);
    const r = await call(rt, 'write', { path: 'a.txt', text: 'x' });
    expect(r.decision).toEqual({ stage: 'pre-execute', outcome: 'allow', by: 'allow-writes' });
    expect(rt.log.events().filter((e) => e.type.startsWith('tool/approval') && 'callId' in e && e.callId === r.callId)).toEqual([]);
    expect(approval.asked).toHaveLength(1);
  });

  it('a call cancelled while its body runs names the cancel (stage execute), not whoever allowed it', async () => {
    const { tool: slow, started } = abortableBody('slow', 'reject');
    const rt = createRuntime({ tools: [slow] });
    rt.hooks.on('tools/pre-execute', 'allow-slow', () => ({ kind: 'allow' }));
    const handle = rt.runCall({ callId: 'c-body', toolName: 'slow', input: {} });
    await started;
    handle.cancel();
    const r = await handle.result;
    expect(r.error?.code).toBe('ABORTED');
    expect(r.decision).toEqual({ stage: 'execute', outcome: 'cancelled', by: 'a cancel of the turn' });
  });

  it('a call cancelled while asking, or whose question timed out, names the cancel or the deadline, not the listener that asked', async () => {
    const write = pathTool('write');
    const never: ApprovalService = { request: (_req, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))) };
    const rt = createRuntime({ tools: [write.tool], approval: never, limits: { approvalTimeoutMs: 20 } });
    applyConfig(rt, { permissions: [{ tool: 'write', decision: 'ask' }] });
    const timedOut = await call(rt, 'write', { path: 'a.txt', text: 'x' });
    expect(timedOut.error?.code).toBe('APPROVAL_DENIED');
    expect(timedOut.decision).toEqual({ stage: 'approval', outcome: 'timeout', by: 'the approval deadline', rule: 'approvalTimeoutMs 20' });

    // Cancelled once the question is up (the approval service was asked).
    let asked!: () => void;
    const askedP = new Promise<void>((r) => (asked = r));
    const waiting: ApprovalService = { request: (req, signal) => (asked(), never.request(req, signal)) };
    const rt2 = createRuntime({ tools: [write.tool], approval: waiting });
    applyConfig(rt2, { permissions: [{ tool: 'write', decision: 'ask' }] });
    const handle = rt2.runCall({ callId: 'c-cancel', toolName: 'write', input: { path: 'b.txt', text: 'x' } });
    await askedP;
    handle.cancel();
    const cancelled = await handle.result;
    expect(cancelled.error?.code).toBe('ABORTED_BEFORE_DISPATCH');
    expect(cancelled.decision).toEqual({ stage: 'approval', outcome: 'cancelled', by: 'a cancel of the turn' });
    expect(write.ran).toEqual([]);
  });

  it('a rule that allows outright is named too; a call every listener handed over has no decision', async () => {
    const write = pathTool('write');
    const rt = createRuntime({ tools: [write.tool] });
    applyConfig(rt, { permissions: [{ tool: 'write', path: 'docs/**', decision: 'allow' }] });
    rt.hooks.on('tools/pre-execute', 'passes', async (_c, next) => next());
    expect((await call(rt, 'write', { path: 'docs/a.md' })).decision).toEqual({ stage: 'pre-execute', outcome: 'allow', by: 'dsh:permissions', rule: 'permissions[0] (tool "write", path "docs/**")' });
    // No rule matched; `passes` returned what its next() answered, the chain's own allow: nobody decided.
    expect((await call(rt, 'write', { path: 'src/a.ts' })).decision).toBeUndefined();
    expect(write.ran).toEqual(['docs/a.md', 'src/a.ts']);
  });

  it('a listener that passes on what its next() answered did not decide: the one that answered did', async () => {
    const write = pathTool('write');
    const rt = createRuntime({ tools: [write.tool] });
    rt.hooks.on('tools/pre-execute', 'outer', async (_c, next) => next());
    rt.hooks.on('tools/pre-execute', 'inner', () => ({ kind: 'deny', reason: 'no', rule: 'inner rule 3' }));
    const r = await call(rt, 'write', { path: 'a.txt' });
    expect(r.decision).toEqual({ stage: 'pre-execute', outcome: 'deny', by: 'inner', rule: 'inner rule 3' });
    // An outer listener that overrides with an answer of its own is the one that decided.
    const rt2 = createRuntime({ tools: [pathTool('write').tool] });
    rt2.hooks.on('tools/pre-execute', 'outer', async (_c, next) => ((await next()).kind === 'allow' ? { kind: 'deny', reason: 'outer says no' } : next()));
    rt2.hooks.on('tools/pre-execute', 'inner', () => ({ kind: 'allow' }));
    expect((await call(rt2, 'write', { path: 'a.txt' })).decision).toEqual({ stage: 'pre-execute', outcome: 'deny', by: 'outer' });
  });

  it('a post-execute block and a listener that fails closed are named too; an allowed call has no decision', async () => {
    const write = pathTool('write');
    const rt = createRuntime({ tools: [write.tool] });
    rt.hooks.on('tools/post-execute', 'dlp', (_d, c) => ((c.args as { path?: string }).path === 'secret' ? { kind: 'block', feedback: 'held back' } : undefined));
    rt.hooks.on('tools/pre-execute', 'flaky', (c, next) => {
      if ((c.args as { path?: string }).path === 'boom') throw new Error('kaput');
      return next();
    });
    const blocked = await call(rt, 'write', { path: 'secret' });
    expect(blocked.isError && blocked.error.code).toBe('POST_EXECUTE_BLOCKED');
    expect(blocked.decision).toEqual({ stage: 'post-execute', outcome: 'block', by: 'dlp' });
    const failed = await call(rt, 'write', { path: 'boom' });
    expect(failed.isError && failed.error.code).toBe('HOOK_FAILED');
    expect(failed.decision).toEqual({ stage: 'pre-execute', outcome: 'failed', by: 'flaky' });
    const fine = await call(rt, 'write', { path: 'ok' });
    expect(fine.isError).toBe(false);
    expect(fine.decision).toBeUndefined();
  });

  it('a hostile rule is no rule: a non-string rule fails the call closed; a huge one is cut', async () => {
    const rt = createRuntime({ tools: [pathTool('write').tool] });
    rt.hooks.on('tools/pre-execute', 'odd', (c) => ((c.args as { path?: string }).path === 'obj' ? ({ kind: 'deny', reason: 'x', rule: { toString: () => 'y' } } as never) : { kind: 'deny', reason: 'x', rule: 'r'.repeat(100_000) }));
    const odd = await call(rt, 'write', { path: 'obj' });
    expect(odd.isError && odd.error.code).toBe('HOOK_FAILED');
    const long = await call(rt, 'write', { path: 'long' });
    expect(long.decision?.rule?.length).toBe(500);
    rt.tools.guard(() => ({ reason: 'r', rule: 7 }) as never, 'bad-guard');
    const guarded = await call(rt, 'write', { path: 'long2' });
    expect(guarded.isError && guarded.error.code).toBe('POLICY_DENIED'); // pre-execute denies first
  });

  it('a guard answering { reason, rule } denies with both; a malformed one fails closed', async () => {
    const rt = createRuntime({ tools: [pathTool('write').tool] });
    rt.tools.guard((c) => ((c.args as { path?: string }).path === 'x' ? { reason: 'not x', rule: 'no-x' } : (c.args as { path?: string }).path === 'y' ? ({ reason: 5 } as never) : undefined), 'g');
    const x = await call(rt, 'write', { path: 'x' });
    expect(x.isError && x.error.code).toBe('GUARD_DENIED');
    expect(x.content).toContain('not x');
    expect(x.decision).toEqual({ stage: 'guard', outcome: 'deny', by: 'g', rule: 'no-x' });
    const y = await call(rt, 'write', { path: 'y' });
    expect(y.isError && y.error.code).toBe('HOOK_FAILED');
    expect(y.decision).toEqual({ stage: 'guard', outcome: 'failed', by: 'g' });
  });
});
