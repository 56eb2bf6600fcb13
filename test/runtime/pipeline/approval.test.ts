/**
 * `ask` → the approval service (SPEC §2.1, §8.3), seen as the `awaitingApproval` state (SPEC §7).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJsonlSessionLog } from '../../../src/adapters/log/jsonlLog.js';
import { createMemoryLog, type SessionLog } from '../../../src/runtime/log/sessionLog.js';
import { tempDir } from '../../adapters/workspaceFixture.js';
import { ErrorCode, type ApprovalAnswer } from '../../../src/protocol/index.js';
import type { ApprovalService } from '../../../src/runtime/pipeline/index.js';
import { echoTool, eventsOf, expectError, expectOk, flushMicrotasks, isSettled, only, setup, typesOf } from './harness.js';

/** An approval service the test answers by hand. */
function manualApproval() {
  const asked: Array<{ req: Parameters<ApprovalService['request']>[0]; signal: AbortSignal; answer: (a: ApprovalAnswer) => void; fail: (e: unknown) => void }> = [];
  const service: ApprovalService = {
    request: (req, signal) =>
      new Promise<ApprovalAnswer>((answer, fail) => {
        asked.push({ req, signal, answer, fail });
      }),
  };
  return { service, asked };
}

function askAlways(rt: ReturnType<typeof setup>['rt'], reason = 'writes a file') {
  rt.hooks.on('tools/pre-execute', 'ask-user', () => ({ kind: 'ask', reason }));
}

describe('ask → approval', () => {
  it('the call sits in awaitingApproval while the service is asked; allowed-once runs it', async () => {
    const { tool, calls } = echoTool();
    const { service, asked } = manualApproval();
    const { rt, call } = setup({ tools: [tool], approval: service });
    askAlways(rt);
    const h = call('echo', { text: 'hi' });
    const states: unknown[] = [];
    h.actor.subscribe((s) => states.push(s.value));
    await flushMicrotasks();
    expect(h.actor.getSnapshot().value).toBe('awaitingApproval');
    expect(asked).toHaveLength(1);
    expect(asked[0]!.req).toMatchObject({ callId: h.actor.getSnapshot().context.request.callId, toolName: 'echo', args: { text: 'hi' }, reason: 'writes a file' });
    expect(calls).toHaveLength(0);
    asked[0]!.answer('allowed-once');
    const r = await h.result;
    expectOk(rt, r, 'hi');
    expect(states).toContain('settled');
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/approval-request', 'tool/approval-answer', 'tool/result']);
    expect(only(rt, r.callId, 'tool/approval-request')).toMatchObject({ toolName: 'echo', reason: 'writes a file' });
    expect(only(rt, r.callId, 'tool/approval-answer').answer).toBe('allowed-once');
  });

  it('allowed-once is not remembered: the same call is asked again', async () => {
    const { tool, calls } = echoTool();
    const { service, asked } = manualApproval();
    const { rt, call } = setup({ tools: [tool], approval: service });
    askAlways(rt);
    for (let i = 0; i < 2; i++) {
      const h = call('echo', { text: 'same' });
      await flushMicrotasks();
      expect(h.actor.getSnapshot().value).toBe('awaitingApproval');
      asked[i]!.answer('allowed-once');
      expectOk(rt, await h.result, 'same');
    }
    expect(asked).toHaveLength(2);
    expect(calls).toHaveLength(2);
  });

  it('allowed-always is remembered for the same tool with identical args; other args are asked', async () => {
    const { tool, calls } = echoTool();
    const { tool: other } = echoTool('echo2');
    const { service, asked } = manualApproval();
    const { rt, call } = setup({ tools: [tool, other], approval: service });
    askAlways(rt);
    const first = call('echo', { text: 'hi', nested: { n: 1 } });
    await flushMicrotasks();
    asked[0]!.answer('allowed-always');
    expectOk(rt, await first.result, 'hi');
    expect(only(rt, (await first.result).callId, 'tool/approval-answer').answer).toBe('allowed-always');

    // Identical args (key order does not matter): not asked again, logged as remembered.
    const again = await call('echo', '{"nested": {"n": 1}, "text": "hi"}').result;
    expectOk(rt, again, 'hi');
    expect(asked).toHaveLength(1);
    expect(typesOf(rt, again.callId)).toEqual(['tool/call', 'tool/approval-answer', 'tool/result']);
    expect(only(rt, again.callId, 'tool/approval-answer').answer).toBe('remembered');

    // Different args, or another tool with the same args: asked.
    const different = call('echo', { text: 'bye', nested: { n: 1 } });
    await flushMicrotasks();
    expect(different.actor.getSnapshot().value).toBe('awaitingApproval');
    asked[1]!.answer('denied');
    expectError(rt, await different.result, ErrorCode.APPROVAL_DENIED);
    const otherTool = call('echo2', { text: 'hi', nested: { n: 1 } });
    await flushMicrotasks();
    expect(otherTool.actor.getSnapshot().value).toBe('awaitingApproval');
    asked[2]!.answer('allowed-once');
    expectOk(rt, await otherTool.result, 'hi');
    expect(calls).toHaveLength(2);
  });

  it('denied gives APPROVAL_DENIED; the body is skipped', async () => {
    const { tool, calls } = echoTool();
    const { service, asked } = manualApproval();
    const { rt, call } = setup({ tools: [tool], approval: service });
    askAlways(rt);
    const h = call('echo', { text: 'hi' });
    await flushMicrotasks();
    asked[0]!.answer('denied');
    const r = await h.result;
    expectError(rt, r, ErrorCode.APPROVAL_DENIED);
    expect(r.error?.name).toBe('ApprovalDeniedError');
    expect(only(rt, r.callId, 'tool/approval-answer').answer).toBe('denied');
    expect(calls).toHaveLength(0);
  });

  it('no answer within limits.approvalTimeoutMs gives APPROVAL_DENIED and withdraws the request', async () => {
    const { tool, calls } = echoTool();
    const { service, asked } = manualApproval();
    const { rt, clock, call } = setup({ tools: [tool], approval: service, limits: { approvalTimeoutMs: 60_000 } });
    askAlways(rt);
    const h = call('echo', { text: 'hi' });
    await clock.advance(59_999);
    expect(h.actor.getSnapshot().value).toBe('awaitingApproval');
    expect(asked[0]!.signal.aborted).toBe(false);
    await clock.advance(1);
    const r = await h.result;
    expectError(rt, r, ErrorCode.APPROVAL_DENIED, /60000 ms/);
    expect(only(rt, r.callId, 'tool/approval-answer').answer).toBe('timeout');
    expect(asked[0]!.signal.aborted).toBe(true);
    asked[0]!.answer('allowed-once'); // too late: changes nothing
    await flushMicrotasks();
    expect(calls).toHaveLength(0);
    expect(eventsOf(rt, r.callId).filter((e) => e.type === 'tool/approval-answer')).toHaveLength(1);
  });

  it('an approval service that rejects gives APPROVAL_DENIED', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({
      tools: [tool],
      approval: { request: async () => Promise.reject(new Error('approval UI crashed')) },
    });
    askAlways(rt);
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.APPROVAL_DENIED);
    expect(only(rt, r.callId, 'warning')).toMatchObject({ code: 'APPROVAL_FAILED' });
    expect(only(rt, r.callId, 'warning').message).toContain('approval UI crashed');
    expect(calls).toHaveLength(0);
  });

  it('an approval service that throws synchronously gives APPROVAL_DENIED', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({
      tools: [tool],
      approval: {
        request: () => {
          throw new Error('not wired');
        },
      },
    });
    askAlways(rt);
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.APPROVAL_DENIED);
    expect(calls).toHaveLength(0);
  });

  it('an answer that is not one of the three denies, and the log stays well-formed', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({
      tools: [tool],
      approval: { request: async () => 'yes' as unknown as ApprovalAnswer },
    });
    askAlways(rt);
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.APPROVAL_DENIED);
    expect(only(rt, r.callId, 'tool/approval-answer').answer).toBe('denied');
    expect(only(rt, r.callId, 'warning')).toMatchObject({ code: 'APPROVAL_ANSWER_INVALID' });
    expect(calls).toHaveLength(0);
  });

  it('without an approval service, ask denies', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    askAlways(rt);
    expectError(rt, await call('echo', { text: 'hi' }).result, ErrorCode.APPROVAL_DENIED);
    expect(calls).toHaveLength(0);
  });

  it('a cancel while awaiting approval gives ABORTED_BEFORE_DISPATCH and withdraws the request', async () => {
    const { tool, calls } = echoTool();
    const { service, asked } = manualApproval();
    const { rt, call } = setup({ tools: [tool], approval: service });
    askAlways(rt);
    const h = call('echo', { text: 'hi' });
    await flushMicrotasks();
    expect(h.actor.getSnapshot().value).toBe('awaitingApproval');
    h.cancel('user pressed stop');
    const r = await h.result;
    expectError(rt, r, ErrorCode.ABORTED_BEFORE_DISPATCH);
    expect(asked[0]!.signal.aborted).toBe(true);
    expect(only(rt, r.callId, 'tool/approval-answer').answer).toBe('cancelled');
    asked[0]!.answer('allowed-once');
    await flushMicrotasks();
    expect(calls).toHaveLength(0);
  });

  it('an approved call still passes the guard: approval cannot allow what the guard denies', async () => {
    const { tool, calls } = echoTool();
    const { service, asked } = manualApproval();
    const { rt, call } = setup({ tools: [tool], approval: service });
    askAlways(rt);
    rt.tools.guard(() => 'echo is disabled', 'kill-switch');
    const h = call('echo', { text: 'hi' });
    await flushMicrotasks();
    asked[0]!.answer('allowed-always');
    expectError(rt, await h.result, ErrorCode.GUARD_DENIED, 'echo is disabled');
    // Remembered approval skips the question, never the guard.
    expectError(rt, await call('echo', { text: 'hi' }).result, ErrorCode.GUARD_DENIED, 'echo is disabled');
    expect(asked).toHaveLength(1);
    expect(calls).toHaveLength(0);
  });

  it('a call that is answered settles only once its answer comes (no answer, no result)', async () => {
    const { tool } = echoTool();
    const { service, asked } = manualApproval();
    const { rt, clock, call } = setup({ tools: [tool], approval: service });
    askAlways(rt);
    const h = call('echo', { text: 'hi' });
    await clock.advance(10_000);
    expect(await isSettled(h.result)).toBe(false);
    expect(typesOf(rt, 'call-1')).toEqual(['tool/call', 'tool/approval-request']);
    asked[0]!.answer('allowed-once');
    expectOk(rt, await h.result, 'hi');
  });
});

describe('allowed-always survives a resume (issue 11.7)', () => {
  /** Session one: `echo {text: 'hi'}` is approved with allowed-always. */
  async function firstSession(log?: SessionLog) {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool], approval: { request: async () => 'allowed-always' }, ...(log ? { log } : {}) });
    askAlways(rt);
    expectOk(rt, await call('echo', { text: 'hi', nested: { n: 1 } }).result, 'hi');
    return rt;
  }

  /** Session two, over the first one's events: an approval service that must not be asked for the same call. */
  async function secondSession(log: SessionLog) {
    const { tool, calls } = echoTool();
    const asked: string[] = [];
    const { rt } = setup({ tools: [tool], log, approval: { request: async (req) => (asked.push(JSON.stringify(req.args)), 'denied') } });
    askAlways(rt);
    // Same args with the keys in another order: the same approval.
    const same = await rt.runCall({ callId: 'again', toolName: 'echo', input: '{"nested":{"n":1},"text":"hi"}' }).result;
    expectOk(rt, same, 'hi');
    expect(only(rt, 'again', 'tool/approval-answer').answer).toBe('remembered');
    const other = await rt.runCall({ callId: 'other', toolName: 'echo', input: '{"text":"rm -rf"}' }).result;
    expectError(rt, other, ErrorCode.APPROVAL_DENIED);
    expect(asked).toEqual(['{"text":"rm -rf"}']);
    expect(calls).toHaveLength(1);
  }

  it('a runtime created over a replayed log does not ask again for the same tool and args', async () => {
    const first = await firstSession();
    await secondSession(createMemoryLog({ initial: first.log.events() }));
  });

  it('a session resumed from its JSONL file does not ask again', async () => {
    const path = join(await tempDir('dsh-approval-'), 'session.jsonl');
    const one = await openJsonlSessionLog(path);
    await firstSession(one.log);
    await one.sink.close();
    const two = await openJsonlSessionLog(path);
    try {
      await secondSession(two.log);
    } finally {
      await two.sink.close();
    }
  });

  it('allowed-once, denied and timeouts in the old log are not remembered', async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool], approval: { request: async () => 'allowed-once' } });
    askAlways(rt);
    expectOk(rt, await call('echo', { text: 'hi' }).result, 'hi');
    const asked: string[] = [];
    const { rt: rt2 } = setup({ tools: [echoTool().tool], log: createMemoryLog({ initial: rt.log.events() }), approval: { request: async () => (asked.push('asked'), 'allowed-once') } });
    askAlways(rt2);
    expectOk(rt2, await rt2.runCall({ callId: 'again', toolName: 'echo', input: '{"text":"hi"}' }).result, 'hi');
    expect(asked).toEqual(['asked']);
  });
});
