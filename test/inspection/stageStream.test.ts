/**
 * Issue 13.1: every stage of a call is observable. A stage listener hears `stage/entered` and
 * `stage/exited` for every stage a call passes through, in order, with the clock time and the
 * outcome, including the stages that pass within one XState macrostep (validating, guard), which
 * actor snapshots never show.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { ErrorCode, type ApprovalAnswer } from '../../src/protocol/index.js';
import { ManualClock, flushMicrotasks, sleep } from '../../src/runtime/clock.js';
import { createRuntime, type RuntimeOptions } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { CALL_STAGE_NAMES, type CallStageEvent, type StageExitedEvent } from '../../src/runtime/inspection/index.js';
import { settle } from '../runtime/settle.js';

function setup(options: Omit<RuntimeOptions, 'clock'> = {}) {
  const clock = new ManualClock(1_000);
  const echo = defineTool({
    name: 'echo',
    input: z.object({ text: z.string(), ms: z.number().default(0) }),
    isConcurrencySafe: () => true,
    execute: async (a, exec) => {
      if (a.ms > 0) await sleep(clock, a.ms, exec.signal);
      return a.text;
    },
  });
  const rt = createRuntime({ tools: [echo], clock, ...options });
  return { clock, rt };
}

/** `stage:outcome` per exited stage of one call, in order. */
const path = (events: readonly CallStageEvent[], callId: string) =>
  events.filter((e): e is StageExitedEvent => e.type === 'stage/exited' && e.callId === callId).map((e) => `${e.stage}:${e.outcome.kind}`);

/** Each call's events alternate entered/exited of the same stage, stages in SPEC order, times non-decreasing. */
function expectWellFormed(events: readonly CallStageEvent[]) {
  const byCall = new Map<string, CallStageEvent[]>();
  for (const e of events) byCall.set(`${e.turnId}/${e.stepIndex}/${e.callId}`, [...(byCall.get(`${e.turnId}/${e.stepIndex}/${e.callId}`) ?? []), e]);
  for (const [key, list] of byCall) {
    expect(list.length % 2, key).toBe(0);
    for (let i = 0; i < list.length; i += 2) {
      const [enter, exit] = [list[i]!, list[i + 1]!];
      expect(enter.type, key).toBe('stage/entered');
      expect(exit).toMatchObject({ type: 'stage/exited', stage: enter.stage, enteredAt: enter.at });
      if (exit.type === 'stage/exited') expect(exit.durationMs).toBe(exit.at - enter.at);
      if (i > 0) {
        expect(CALL_STAGE_NAMES.indexOf(enter.stage), key).toBeGreaterThan(CALL_STAGE_NAMES.indexOf(list[i - 2]!.stage));
        expect(enter.at).toBeGreaterThanOrEqual(list[i - 1]!.at);
      }
    }
    expect(list.at(-1)!.stage, key).toBe('finalizing');
  }
}

describe('the stage stream of a call (runCall)', () => {
  it('a plain call: validating, executing, finalizing (stages with no listener are skipped), each with its outcome', async () => {
    const { rt } = setup();
    const events: CallStageEvent[] = [];
    const r = await rt.runCall({ callId: 'c1', toolName: 'echo', input: '{"text":"hi"}' }, { onStage: (e) => events.push(e) }).result;
    expect(r.content).toBe('hi');
    expect(events.map((e) => `${e.type} ${e.stage}`)).toEqual([
      'stage/entered validating',
      'stage/exited validating',
      'stage/entered executing',
      'stage/exited executing',
      'stage/entered finalizing',
      'stage/exited finalizing',
    ]);
    expect(path(events, 'c1')).toEqual(['validating:valid', 'executing:ok', 'finalizing:ok']);
    for (const e of events) expect(e).toMatchObject({ callId: 'c1', toolName: 'echo', index: 0 });
    expectWellFormed(events);
  });

  it("a lone call's listener hears that call alone: not a later call of the same request, not the calls after it settled", async () => {
    const { rt, clock } = setup();
    const request = { callId: 'same', toolName: 'echo', input: '{"text":"hi","ms":10}' };
    const first: CallStageEvent[] = [];
    const second: CallStageEvent[] = [];
    const one = rt.runCall(request, { onStage: (e) => first.push(e) });
    // The same request object again while the first call runs: each listener hears its own call.
    const two = rt.runCall(request, { index: 1 });
    const three = rt.runCall(request, { index: 2, onStage: (e) => second.push(e) });
    await settle(clock, Promise.all([one.result, two.result, three.result]));
    expect(path(first, 'same')).toEqual(['validating:valid', 'executing:ok', 'finalizing:ok']);
    expect(first.every((e) => e.index === 0)).toBe(true);
    expect(path(second, 'same')).toEqual(['validating:valid', 'executing:ok', 'finalizing:ok']);
    expect(second.every((e) => e.index === 2)).toBe(true);
    // Settled: its listener is let go, and a later call (heard by a runtime listener) is not its.
    const all: CallStageEvent[] = [];
    rt.onStage((e) => all.push(e));
    await rt.runCall({ callId: 'later', toolName: 'echo', input: '{"text":"x"}' }).result;
    expect(path(all, 'later')).toEqual(['validating:valid', 'executing:ok', 'finalizing:ok']);
    expect(first.filter((e) => e.callId === 'later')).toEqual([]);
    expect(second.filter((e) => e.callId === 'later')).toEqual([]);
  });

  it('a call through every stage, awaiting approval: each stage in SPEC order, the wait timed on the clock', async () => {
    let answer!: (a: ApprovalAnswer) => void;
    const { rt, clock } = setup({ approval: { request: () => new Promise((res) => (answer = res)) } });
    rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask', reason: 'check it' }));
    rt.tools.guard(() => undefined, 'fine');
    rt.hooks.on('tools/post-execute', 'post', () => ({ kind: 'accept' }));
    const events: CallStageEvent[] = [];
    const h = rt.runCall({ callId: 'c1', toolName: 'echo', input: '{"text":"hi"}' }, { onStage: (e) => events.push(e) });
    await flushMicrotasks();
    expect(events.at(-1)).toMatchObject({ type: 'stage/entered', stage: 'awaitingApproval', at: 1_000 });
    await clock.advance(5_000);
    answer('allowed-once');
    expect((await h.result).content).toBe('hi');
    expect(path(events, 'c1')).toEqual([
      'validating:valid',
      'preExecute:ask',
      'awaitingApproval:allowed-once',
      'guard:pass',
      'executing:ok',
      'postExecute:accepted',
      'finalizing:ok',
    ]);
    expect(events.find((e) => e.type === 'stage/exited' && e.stage === 'preExecute')).toMatchObject({ outcome: { kind: 'ask', message: 'check it' } });
    expect(events.find((e) => e.type === 'stage/exited' && e.stage === 'awaitingApproval')).toMatchObject({ enteredAt: 1_000, at: 6_000, durationMs: 5_000 });
    expectWellFormed(events);
  });

  it('a call rejected at guard: guard:deny names the guard and the code, then finalizing with GUARD_DENIED', async () => {
    const { rt } = setup();
    rt.tools.guard(() => 'not today', 'calendar');
    const events: CallStageEvent[] = [];
    const r = await rt.runCall({ callId: 'g1', toolName: 'echo', input: '{"text":"hi"}' }, { onStage: (e) => events.push(e) }).result;
    expect(r.error?.code).toBe(ErrorCode.GUARD_DENIED);
    expect(path(events, 'g1')).toEqual(['validating:valid', 'guard:deny', 'finalizing:error']);
    expect(events.find((e) => e.type === 'stage/exited' && e.stage === 'guard')).toMatchObject({
      outcome: { kind: 'deny', code: ErrorCode.GUARD_DENIED, message: 'not today', listener: 'calendar' },
    });
    expect(events.at(-1)).toMatchObject({ stage: 'finalizing', outcome: { kind: 'error', code: ErrorCode.GUARD_DENIED } });
    expectWellFormed(events);
  });

  it('a validation failure: validating:invalid with INVALID_ARGS (and UNKNOWN_TOOL), straight to finalizing', async () => {
    const { rt } = setup();
    const events: CallStageEvent[] = [];
    const onStage = (e: CallStageEvent) => events.push(e);
    await rt.runCall({ callId: 'v1', toolName: 'echo', input: '{"text":42}' }, { onStage }).result;
    await rt.runCall({ callId: 'v2', toolName: 'nope', input: '{}' }, { onStage }).result;
    expect(path(events, 'v1')).toEqual(['validating:invalid', 'finalizing:error']);
    expect(events.find((e) => e.type === 'stage/exited' && e.callId === 'v1' && e.stage === 'validating')).toMatchObject({ outcome: { code: ErrorCode.INVALID_ARGS } });
    expect(path(events, 'v2')).toEqual(['validating:invalid', 'finalizing:error']);
    expect(events.find((e) => e.type === 'stage/exited' && e.callId === 'v2' && e.stage === 'validating')).toMatchObject({ outcome: { code: ErrorCode.UNKNOWN_TOOL } });
    expectWellFormed(events);
  });

  it('a cancelled call: a running body exits executing with ABORTED; a call cancelled in approval or in a pending pre-execute exits that stage cancelled', async () => {
    const { rt, clock } = setup({ approval: { request: () => new Promise<ApprovalAnswer>(() => {}) } });
    const events: CallStageEvent[] = [];
    const onStage = (e: CallStageEvent) => events.push(e);

    const running = rt.runCall({ callId: 'run', toolName: 'echo', input: '{"text":"hi","ms":60000}' }, { onStage });
    await flushMicrotasks();
    expect(events.at(-1)).toMatchObject({ type: 'stage/entered', stage: 'executing' });
    running.cancel('stop');
    expect((await settle(clock, running.result)).error?.code).toBe(ErrorCode.ABORTED);
    expect(path(events, 'run')).toEqual(['validating:valid', 'executing:error', 'finalizing:error']);
    expect(events.find((e) => e.type === 'stage/exited' && e.callId === 'run' && e.stage === 'executing')).toMatchObject({ outcome: { code: ErrorCode.ABORTED } });

    const remove = rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask' }));
    const waiting = rt.runCall({ callId: 'ask', toolName: 'echo', input: '{"text":"hi"}' }, { onStage });
    await flushMicrotasks();
    waiting.cancel();
    expect((await waiting.result).error?.code).toBe(ErrorCode.ABORTED_BEFORE_DISPATCH);
    expect(path(events, 'ask')).toEqual(['validating:valid', 'preExecute:ask', 'awaitingApproval:cancelled', 'finalizing:error']);
    remove();

    rt.hooks.on('tools/pre-execute', 'slow', () => new Promise(() => {}));
    const pending = rt.runCall({ callId: 'pre', toolName: 'echo', input: '{"text":"hi"}' }, { onStage });
    await flushMicrotasks();
    pending.cancel();
    expect((await pending.result).error?.code).toBe(ErrorCode.ABORTED_BEFORE_DISPATCH);
    expect(path(events, 'pre')).toEqual(['validating:valid', 'preExecute:cancelled', 'finalizing:error']);
    expect(events.find((e) => e.type === 'stage/exited' && e.callId === 'pre' && e.stage === 'preExecute')).toMatchObject({
      outcome: { kind: 'cancelled', code: ErrorCode.ABORTED_BEFORE_DISPATCH },
    });
    expectWellFormed(events);
  });

  it('approval timeout and denial are the awaitingApproval outcome', async () => {
    const answers: Array<(a: ApprovalAnswer) => void> = [];
    const { rt, clock } = setup({ approval: { request: () => new Promise((res) => answers.push(res)) }, limits: { approvalTimeoutMs: 10_000 } });
    rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask' }));
    const events: CallStageEvent[] = [];
    const denied = rt.runCall({ callId: 'd', toolName: 'echo', input: '{"text":"a"}' }, { onStage: (e) => events.push(e) });
    await flushMicrotasks();
    answers[0]!('denied');
    await denied.result;
    const late = rt.runCall({ callId: 't', toolName: 'echo', input: '{"text":"b"}' }, { onStage: (e) => events.push(e) });
    await settle(clock, late.result);
    expect(path(events, 'd')).toEqual(['validating:valid', 'preExecute:ask', 'awaitingApproval:denied', 'finalizing:error']);
    expect(path(events, 't')).toEqual(['validating:valid', 'preExecute:ask', 'awaitingApproval:timeout', 'finalizing:error']);
    expect(events.find((e) => e.type === 'stage/exited' && e.callId === 't' && e.stage === 'awaitingApproval')).toMatchObject({ durationMs: 10_000 });
    expectWellFormed(events);
  });

  it('post-execute blocking and a listener that fails closed are that stage outcome, naming the listener', async () => {
    const { rt } = setup();
    rt.hooks.on('tools/post-execute', 'censor', (draft) => (draft.content === 'secret' ? { kind: 'block', feedback: 'no secrets' } : { kind: 'accept' }));
    rt.hooks.on('tools/pre-execute', 'picky', (call, next) => ((call.args as { text: string }).text === 'boom' ? (() => { throw new Error('picky broke'); })() : next()));
    const events: CallStageEvent[] = [];
    const onStage = (e: CallStageEvent) => events.push(e);
    await rt.runCall({ callId: 'b', toolName: 'echo', input: '{"text":"secret"}' }, { onStage }).result;
    await rt.runCall({ callId: 'f', toolName: 'echo', input: '{"text":"boom"}' }, { onStage }).result;
    expect(path(events, 'b')).toEqual(['validating:valid', 'preExecute:allow', 'executing:ok', 'postExecute:blocked', 'finalizing:error']);
    expect(events.find((e) => e.type === 'stage/exited' && e.callId === 'b' && e.stage === 'postExecute')).toMatchObject({
      outcome: { code: ErrorCode.POST_EXECUTE_BLOCKED, listener: 'censor', message: 'no secrets' },
    });
    expect(path(events, 'f')).toEqual(['validating:valid', 'preExecute:failed', 'finalizing:error']);
    expect(events.find((e) => e.type === 'stage/exited' && e.callId === 'f' && e.stage === 'preExecute')).toMatchObject({
      outcome: { code: ErrorCode.HOOK_FAILED, listener: 'picky' },
    });
  });

  it('a listener that throws does not touch the call; the failure is a STAGE_LISTENER_FAILED warning', async () => {
    const { rt } = setup();
    const r = await rt.runCall({ callId: 'c1', toolName: 'echo', input: '{"text":"hi"}' }, {
      onStage: () => {
        throw new Error('ui bug');
      },
    }).result;
    expect(r.content).toBe('hi');
    const warnings = rt.log.events().filter((e) => e.type === 'warning');
    expect(warnings).toHaveLength(6);
    expect(warnings[0]).toMatchObject({ code: 'STAGE_LISTENER_FAILED', callId: 'c1' });
    expect(warnings[0]!.type === 'warning' && warnings[0]!.message).toContain('ui bug');
  });
  it('listeners that throw what is not an Error (a Symbol, an object whose toString throws) are recorded too; the call and the turn go on', async () => {
    const { rt } = setup();
    rt.onStage(() => {
      throw { toString: () => { throw new Error('nested'); } };
    });
    const r = await rt.runCall({ callId: 'c2', toolName: 'echo', input: '{"text":"hi"}' }, {
      onStage: () => {
        throw Symbol('odd');
      },
    }).result;
    expect(r.content).toBe('hi');
    const warnings = rt.log.events().filter((e) => e.type === 'warning');
    // Six stage events (three stages), each failing in both listeners.
    expect(warnings).toHaveLength(12);
    for (const w of warnings) expect(w).toMatchObject({ code: 'STAGE_LISTENER_FAILED', callId: 'c2', message: expect.any(String) });
    expect(rt.log.events().at(-1)).toMatchObject({ type: 'tool/result', callId: 'c2' });
  });
});

describe('stage event types', () => {
  it('an exit narrowed by its stage has that stage\'s outcome kinds (checked by tsc)', async () => {
    const { rt } = setup();
    const kinds: string[] = [];
    await rt.runCall({ callId: 'c1', toolName: 'echo', input: '{"text":"hi"}' }, {
      onStage: (e) => {
        if (e.type !== 'stage/exited') return;
        expectTypeOf(e.durationMs).toEqualTypeOf<number>();
        if (e.stage === 'guard') expectTypeOf(e.outcome.kind).toEqualTypeOf<'pass' | 'deny' | 'failed'>();
        if (e.stage === 'validating') {
          expectTypeOf(e.outcome.kind).toEqualTypeOf<'valid' | 'invalid'>();
          kinds.push(e.outcome.kind);
        }
      },
    }).result;
    expect(kinds).toEqual(['valid']);
  });
});

describe('the stage stream of a turn', () => {
  it('parallel calls each have their own stream, told apart by callId, index, turnId and stepIndex', async () => {
    const { rt, clock } = setup();
    const all: CallStageEvent[] = [];
    const removeAll = rt.onStage((e) => all.push(e));
    const model = scriptedModel(
      [
        { toolCalls: [{ toolName: 'echo', input: { text: 'a', ms: 30 } }, { toolName: 'echo', input: { text: 'b', ms: 10 } }, { toolName: 'echo', input: { text: 'c', ms: 20 } }] },
        { text: 'done' },
      ],
      { clock },
    );
    const turnEvents: CallStageEvent[] = [];
    const turn = rt.startTurn({ model, input: 'go', onStage: (e) => turnEvents.push(e) });
    expect((await settle(clock, turn.done)).outcome).toBe('completed');
    removeAll();
    expect(turnEvents).toEqual(all);
    const ids = ['call-1-0', 'call-1-1', 'call-1-2'];
    ids.forEach((id, index) => {
      expect(path(all, id)).toEqual(['validating:valid', 'executing:ok', 'finalizing:ok']);
      for (const e of all.filter((x) => x.callId === id)) expect(e).toMatchObject({ toolName: 'echo', index, turnId: 'turn-1', stepIndex: 0 });
    });
    // They ran together: every call entered executing before any left it.
    const firstExit = all.findIndex((e) => e.type === 'stage/exited' && e.stage === 'executing');
    const enters = all.map((e, i) => (e.type === 'stage/entered' && e.stage === 'executing' ? i : -1)).filter((i) => i >= 0);
    expect(enters).toHaveLength(3);
    expect(Math.max(...enters)).toBeLessThan(firstExit);
    // b (10 ms) left executing first, a (30 ms) last.
    expect(all.filter((e) => e.type === 'stage/exited' && e.stage === 'executing').map((e) => e.callId)).toEqual(['call-1-1', 'call-1-2', 'call-1-0']);
    expectWellFormed(all);
  });

  it('a call never dispatched (the turn was cancelled) is validating then finalizing with ABORTED_BEFORE_DISPATCH; a running one exits executing ABORTED', async () => {
    // One call at a time: the second waits, validated, behind the first.
    const { rt, clock } = setup({ concurrency: 1 });
    const model = scriptedModel([{ toolCalls: [{ toolName: 'echo', input: { text: 'a', ms: 60_000 } }, { toolName: 'echo', input: { text: 'b' } }] }, { text: 'done' }], { clock });
    const events: CallStageEvent[] = [];
    const turn = rt.startTurn({ model, input: 'go' });
    turn.onStage((e) => {
      events.push(e);
      if (e.type === 'stage/exited' && e.stage === 'validating' && e.callId === 'call-1-1') turn.cancel('user');
    });
    expect((await settle(clock, turn.done)).outcome).toBe('cancelled');
    expect(path(events, 'call-1-0')).toEqual(['validating:valid', 'executing:error', 'finalizing:error']);
    expect(path(events, 'call-1-1')).toEqual(['validating:valid', 'finalizing:error']);
    expect(events.filter((e) => e.type === 'stage/exited' && e.stage === 'finalizing').map((e) => e.type === 'stage/exited' && e.outcome.code)).toEqual([
      ErrorCode.ABORTED,
      ErrorCode.ABORTED_BEFORE_DISPATCH,
    ]);
    expectWellFormed(events);
  });

  it('turn listeners hear only their turn, and are dropped when it ends', async () => {
    const { rt, clock } = setup();
    const heard: CallStageEvent[] = [];
    const model = () => scriptedModel([{ toolCalls: [{ toolName: 'echo', input: { text: 'x' } }] }, { text: 'done' }], { clock });
    const t1 = rt.startTurn({ model: model(), input: 'one', onStage: (e) => heard.push(e) });
    const t2 = rt.startTurn({ model: model(), input: 'two' });
    await settle(clock, Promise.all([t1.done, t2.done]));
    expect(new Set(heard.map((e) => e.turnId))).toEqual(new Set(['turn-1']));
    expect(path(heard, 'call-1-0')).toEqual(['validating:valid', 'executing:ok', 'finalizing:ok']);
    // After the turn, subscribing is a no-op and nothing is observed any more.
    const before = rt.pipeline.execute;
    t1.onStage(() => {})();
    expect(rt.pipeline.execute).toBe(before);
  });

  it('a listener added while a call runs hears it from its next stage on (adopted, well formed); once removed it hears nothing more', async () => {
    const { rt, clock } = setup();
    const events: CallStageEvent[] = [];
    const running = rt.runCall({ callId: 'early', toolName: 'echo', input: '{"text":"hi","ms":1000}' });
    await flushMicrotasks();
    const remove = rt.onStage((e) => events.push(e));
    expect(events).toEqual([]); // nothing is replayed
    expect((await settle(clock, running.result)).isError).toBe(false);
    // executing began unheard: the call is heard from finalizing on, with no stage left open
    expect(events.map((e) => `${e.type} ${e.stage}`)).toEqual(['stage/entered finalizing', 'stage/exited finalizing']);
    expect(path(events, 'early')).toEqual(['finalizing:ok']);
    remove();
    expect((await rt.runCall({ callId: 'late', toolName: 'echo', input: '{"text":"hi"}' }).result).isError).toBe(false);
    expect(events.filter((e) => e.callId === 'late')).toEqual([]);
  });
});
