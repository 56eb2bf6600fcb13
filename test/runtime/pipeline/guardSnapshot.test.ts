/**
 * SPEC §8.18: each call consults the guards as they were when it started. A guard registered while
 * a call waits (in pre-execute, or in approval) does not apply to that call, and applies to the
 * next one. (The test in guard.test.ts registers the new guard from inside another guard, where the
 * registry's copy-on-add list hides a stage that reads the live list; here the call is parked.)
 */
import { describe, expect, it } from 'vitest';
import type { ApprovalAnswer } from '../../../src/protocol/index.js';
import type { ApprovalService } from '../../../src/runtime/pipeline/approvalService.js';
import { echoTool, expectError, expectOk, flushMicrotasks, setup } from './harness.js';
import { ErrorCode } from '../../../src/protocol/index.js';

describe('the guard snapshot (SPEC §8.18)', () => {
  it('a guard registered while a call waits in pre-execute does not apply to it, and applies to the next call', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const held: Array<() => void> = [];
    // The first call's pre-execute decision comes later; the next calls' at once.
    rt.hooks.on('tools/pre-execute', 'slow-policy', (c) =>
      (c.args as { text: string }).text === 'first' ? new Promise((r) => held.push(() => r({ kind: 'allow' }))) : { kind: 'allow' },
    );
    const first = call('echo', { text: 'first' });
    await flushMicrotasks();
    expect(first.actor.getSnapshot().value).toBe('preExecuteWaiting');
    rt.tools.guard(() => 'registered while the first call waited', 'late-kill-switch');
    held[0]!();
    expectOk(rt, await first.result, 'first');
    expectError(rt, await call('echo', { text: 'second' }).result, ErrorCode.GUARD_DENIED, 'registered while the first call waited');
    expect(calls.map((c) => c.args)).toEqual([{ text: 'first' }]);
  });

  it('a guard registered while a call waits for its approval does not apply to it, and applies to the next call', async () => {
    const { tool, calls } = echoTool();
    const answers: Array<(a: ApprovalAnswer) => void> = [];
    const approval: ApprovalService = { request: () => new Promise<ApprovalAnswer>((r) => answers.push(r)) };
    const { rt, call } = setup({ tools: [tool], approval });
    rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask', reason: 'writes a file' }));
    const first = call('echo', { text: 'first' });
    await flushMicrotasks();
    expect(first.actor.getSnapshot().value).toBe('awaitingApproval');
    rt.tools.guard(() => 'registered while the first call was asked about', 'late-kill-switch');
    answers[0]!('allowed-once');
    expectOk(rt, await first.result, 'first');
    const second = call('echo', { text: 'second' });
    await flushMicrotasks();
    answers[1]!('allowed-once');
    expectError(rt, await second.result, ErrorCode.GUARD_DENIED, 'registered while the first call was asked about');
    expect(calls.map((c) => c.args)).toEqual([{ text: 'first' }]);
  });
});
