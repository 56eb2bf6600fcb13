/**
 * What the model and the log are told when a call ends another way than its body's value (SPEC §2,
 * §3, §8.9): each ending's code, message and `decision`, word for word, since the model reads them.
 * Also the machine's last lines of defence, reached through a port that breaks its contract (a
 * user's own `CallStages` given to `dsh/machines`): a stage's promise that rejects, a result that
 * cannot be drafted.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/protocol/index.js';
import { createActor, toPromise } from 'xstate';
import type { ExecOutcome } from '../../../machines/callStages.js';
import { schedulerMachine } from '../../../machines/scheduler.js';
import { echoTool, flushMicrotasks, manualTool, only, setup } from './harness.js';

describe('how a call that did not finish normally ends', () => {
  it('a value returned after the cancel: ABORTED, the value discarded, decided by the cancel', async () => {
    const { tool, runs } = manualTool('late');
    const { rt, call } = setup({ tools: [tool], limits: { abortGraceMs: 500 } });
    const h = call('late');
    await flushMicrotasks();
    h.cancel();
    runs[0]!.resolve('the value');
    const r = await h.result;
    expect([r.error?.code, r.error?.message]).toEqual([ErrorCode.ABORTED, 'cancelled; the tool body returned after the cancel and its result was discarded']);
    expect(r.decision).toEqual({ stage: 'execute', outcome: 'cancelled', by: 'a cancel of the turn' });
    expect(runs[0]!.abortedWith()).toBe('cancelled');
  });

  it('a failure after the cancel: ABORTED, saying why it was aborted', async () => {
    const { tool, runs } = manualTool('fails');
    const { call } = setup({ tools: [tool], limits: { abortGraceMs: 500 } });
    const h = call('fails');
    await flushMicrotasks();
    h.cancel('stop');
    runs[0]!.reject(new Error('disk on fire'));
    const r = await h.result;
    expect([r.error?.code, r.error?.message]).toEqual([ErrorCode.ABORTED, 'aborted: stop']);
    expect(r.decision).toEqual({ stage: 'execute', outcome: 'cancelled', by: 'a cancel of the turn' });
    expect(runs[0]!.abortedWith()).toBe('stop');
  });

  it('a body that settles once its call has ended is noted, with whether it succeeded, and nothing of it kept', async () => {
    const { tool, runs } = manualTool('stubborn');
    const { rt, clock, call } = setup({ tools: [tool], limits: { abortGraceMs: 500 } });
    const h = call('stubborn');
    await flushMicrotasks();
    h.cancel();
    await clock.advance(500);
    const r = await h.result;
    runs[0]!.reject(new Error('finally failed'));
    await flushMicrotasks();
    const w = only(rt, r.callId, 'warning');
    expect([w.code, w.message, w.data]).toEqual(['LATE_OUTCOME_DISCARDED', 'the body of "stubborn" settled after its call was already settled; its outcome was discarded', { ok: false }]);
  });

  it('a cancel while the approval waits: ABORTED_BEFORE_DISPATCH; a withdrawn approval: APPROVAL_DENIED "approval cancelled", decided by the cancel', async () => {
    let withdraw: ((e: Error) => void) | undefined;
    const echo = echoTool();
    const { rt, call } = setup({ tools: [echo.tool], approval: { request: () => new Promise((_, reject) => (withdraw = reject)) } });
    rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask', reason: 'look' }));
    const cancelled = call('echo', { text: 'hi' });
    await flushMicrotasks();
    cancelled.cancel();
    const c = await cancelled.result;
    expect([c.error?.code, c.error?.message]).toEqual([ErrorCode.ABORTED_BEFORE_DISPATCH, 'cancelled while waiting for approval']);
    const withdrawn = call('echo', { text: 'hi' });
    await flushMicrotasks();
    withdraw!(new Error('the page went away'));
    const w = await withdrawn.result;
    expect([w.error?.code, w.error?.message]).toEqual([ErrorCode.APPROVAL_DENIED, 'approval cancelled']);
    expect(w.decision).toEqual({ stage: 'approval', outcome: 'cancelled', by: 'a cancel of the turn' });
    expect(only(rt, w.callId, 'tool/approval-answer').answer).toBe('cancelled');
  });

  it('a cancel while a pre-execute listener decides: ABORTED_BEFORE_DISPATCH, decided by the cancel', async () => {
    const echo = echoTool();
    const { rt, call } = setup({ tools: [echo.tool] });
    rt.hooks.on('tools/pre-execute', 'slow', () => new Promise(() => {}));
    const h = call('echo', { text: 'hi' });
    await flushMicrotasks();
    h.cancel();
    const r = await h.result;
    expect([r.error?.code, r.error?.message]).toEqual([ErrorCode.ABORTED_BEFORE_DISPATCH, 'cancelled before the tool body was dispatched']);
    expect(r.decision).toEqual({ stage: 'pre-execute', outcome: 'cancelled', by: 'a cancel of the turn' });
    expect(echo.calls).toEqual([]);
  });

  it("a person's deny with a reason: APPROVAL_DENIED \"approval denied: <reason>\", decided by the person", async () => {
    const echo = echoTool();
    const { rt, call } = setup({ tools: [echo.tool], approval: { request: async () => ({ answer: 'denied', reason: 'not on main' }) } });
    rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask', reason: 'look' }));
    const r = await call('echo', { text: 'hi' }).result;
    expect([r.error?.code, r.error?.message]).toEqual([ErrorCode.APPROVAL_DENIED, 'approval denied: not on main']);
    expect(r.decision).toEqual({ stage: 'approval', outcome: 'deny', by: 'the person' });
    expect(only(rt, r.callId, 'tool/approval-answer')).toMatchObject({ answer: 'denied', reason: 'not on main' });
  });
});

describe("a port that breaks its contract (a user's CallStages): the call still ends with a result", () => {
  const broken = async (override: object) => {
    const echo = echoTool();
    const { rt } = setup({ tools: [echo.tool] });
    const pipeline = { ...rt.pipeline, ...override };
    const actor = createActor(schedulerMachine, { input: { pipeline, log: rt.log, calls: [{ callId: 'c1', toolName: 'echo', input: '{"text":"hi"}' }], complete: true } });
    const done = toPromise(actor);
    actor.start();
    return (await done).results[0]!;
  };

  it('pre-execute rejects: HOOK_FAILED naming no listener', async () => {
    const r = await broken({ hasPreExecute: () => true, preExecute: () => Promise.reject(new Error('port broke')) });
    expect([r.error?.code, r.error?.message]).toEqual([ErrorCode.HOOK_FAILED, 'tools/pre-execute listener "?" failed: Error: port broke']);
  });

  it('post-execute rejects: HOOK_FAILED naming no listener', async () => {
    const r = await broken({ planPostExecute: () => ({ kind: 'run' }), postExecute: () => Promise.reject(new Error('port broke')) });
    expect([r.error?.code, r.error?.message]).toEqual([ErrorCode.HOOK_FAILED, 'tools/post-execute listener "?" failed: Error: port broke']);
  });

  it('execute rejects: TOOL_FAILED with what it threw', async () => {
    const r = await broken({ execute: () => Promise.reject(new Error('port broke')) });
    expect([r.error?.code, r.error?.message]).toEqual([ErrorCode.TOOL_FAILED, 'Error: port broke']);
  });

  it('an execute that fails for another reason after the cancel: ABORTED, saying what failed', async () => {
    const echo = echoTool();
    const { rt } = setup({ tools: [echo.tool], limits: { abortGraceMs: 500 } });
    let settle: ((o: ExecOutcome) => void) | undefined;
    const pipeline = { ...rt.pipeline, execute: () => new Promise<ExecOutcome>((r) => (settle = r)) };
    const actor = createActor(schedulerMachine, { input: { pipeline, log: rt.log, calls: [{ callId: 'c1', toolName: 'echo', input: '{"text":"hi"}' }], complete: true } });
    const done = toPromise(actor);
    actor.start();
    await flushMicrotasks();
    actor.send({ type: 'CANCEL' });
    settle!({ ok: false, error: { name: 'ToolFailedError', code: ErrorCode.TOOL_FAILED, message: 'disk on fire' } });
    const r = (await done).results[0]!;
    expect([r.error?.code, r.error?.message]).toEqual([ErrorCode.ABORTED, 'cancelled: disk on fire']);
  });

  it('the value cannot be drafted: TOOL_FAILED saying so', async () => {
    const r = await broken({ draftFromValue: () => { throw new Error('cannot draft'); } });
    expect([r.error?.code, r.error?.message]).toEqual([ErrorCode.TOOL_FAILED, 'the result of "echo" could not be drafted: Error: cannot draft']);
  });
});
