import { createActor, toPromise, type AnyActorRef } from 'xstate';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callsOf, schedulerMachine } from '../../machines/scheduler.js';
import { toolCallMachine } from '../../machines/toolCall.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { ManualClock, sleep } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';

function runtime(clock = new ManualClock(), context: Record<string, unknown> = {}) {
  const seenContext: unknown[] = [];
  const wait = defineTool({
    name: 'wait',
    input: z.object({ ms: z.number() }),
    isConcurrencySafe: () => true,
    execute: async (a, exec) => {
      seenContext.push(exec.context);
      await sleep(clock, a.ms, exec.signal);
      return `waited ${a.ms}`;
    },
  });
  return { clock, rt: createRuntime({ tools: [wait], clock, context }), seenContext };
}

async function drive(clock: ManualClock, done: Promise<unknown>) {
  let finished = false;
  void done.then(() => (finished = true));
  for (let i = 0; !finished && i < 1000; i++) {
    await new Promise((r) => setImmediate(r));
    if (!finished && !(await clock.runNext())) await clock.advance(1);
  }
  return done;
}

const call = (id: string, ms = 1) => ({ callId: id, toolName: 'wait', input: JSON.stringify({ ms }) });

describe('scheduler', () => {
  it('an empty batch logs no tool events and finishes at once', async () => {
    const { rt } = runtime();
    const actor = createActor(schedulerMachine, { input: { pipeline: rt.pipeline, log: rt.log, calls: [], complete: true } }).start();
    expect(actor.getSnapshot().status).toBe('done');
    expect(actor.getSnapshot().output?.results).toEqual([]);
    expect(rt.log.events()).toEqual([]);
  });

  it('calls that arrive together (one CALL.ADD with `requests`): logged in order, run, committed in order', async () => {
    const { clock, rt } = runtime();
    const actor = createActor(schedulerMachine, { input: { pipeline: rt.pipeline, log: rt.log, turnId: 't', stepIndex: 1 }, clock });
    const done = toPromise(actor);
    actor.start();
    actor.send({ type: 'CALL.ADD', requests: [call('a', 30), call('b', 10), call('a', 1)] });
    actor.send({ type: 'CALL.ADD', request: call('c', 20) });
    actor.send({ type: 'INPUT.END', finishReason: 'tool-calls' });
    const out = (await drive(clock, done)) as { results: { callId: string; error?: { code: string } }[] };
    expect(out.results.map((r) => `${r.callId}:${r.error?.code ?? 'ok'}`)).toEqual(['a:ok', 'b:ok', `a:${ErrorCode.DUPLICATE_CALL_ID}`, 'c:ok']);
    const events = rt.log.events();
    expect(events.filter((e) => e.type === 'tool/call').map((e) => e.type === 'tool/call' && `${e.index}:${e.callId}`)).toEqual(['0:a', '1:b', '2:a', '3:c']);
    // b finished first (10 ms) but its result is committed after a's (30 ms): call order.
    expect(events.filter((e) => e.type === 'tool/result').map((e) => e.type === 'tool/result' && e.callId)).toEqual(['a', 'b', 'a', 'c']);
  });

  it('a duplicate callId in one step gets its own pair with DUPLICATE_CALL_ID and does not run', async () => {
    const { clock, rt } = runtime();
    const actor = createActor(schedulerMachine, { input: { pipeline: rt.pipeline, log: rt.log, calls: [call('a'), call('a'), call('b')], complete: true }, clock });
    const done = toPromise(actor);
    actor.start();
    const out = await drive(clock, done);
    expect((out as { results: { error?: { code: string } }[] }).results.map((r) => r.error?.code ?? 'ok')).toEqual(['ok', ErrorCode.DUPLICATE_CALL_ID, 'ok']);
    const events = rt.log.events();
    expect(events.filter((e) => e.type === 'tool/call')).toHaveLength(3);
    expect(events.filter((e) => e.type === 'tool/result')).toHaveLength(3);
  });

  it('a batch arriving after its signal aborted: every call ABORTED_BEFORE_DISPATCH, each with its pair', () => {
    const { rt } = runtime();
    const actor = createActor(schedulerMachine, {
      input: { pipeline: rt.pipeline, log: rt.log, calls: [call('a'), call('b')], complete: true, cancelled: true },
    }).start();
    expect(actor.getSnapshot().status).toBe('done');
    const events = rt.log.events();
    expect(events.map((e) => e.type)).toEqual(['tool/call', 'tool/call', 'tool/result', 'tool/result']);
    expect(events.filter((e) => e.type === 'tool/result').map((e) => e.type === 'tool/result' && e.result.error?.code)).toEqual([
      ErrorCode.ABORTED_BEFORE_DISPATCH,
      ErrorCode.ABORTED_BEFORE_DISPATCH,
    ]);
  });

  it('keeps live call actors within the concurrency limit, reuses ids per index and stops finished ones', async () => {
    const { clock, rt } = runtime();
    const calls = Array.from({ length: 20 }, (_, i) => call(`c${i}`, (i % 4) + 1));
    // Call actors are created with the scheduler as parent but not kept in its snapshot: they are
    // seen through inspection (@xstate.actor when created, a done snapshot when they end).
    const live = new Set<AnyActorRef>();
    const ids = new Set<string>();
    const parents = new Set<unknown>();
    let maxLive = 0;
    const actor = createActor(schedulerMachine, {
      input: { pipeline: rt.pipeline, log: rt.log, calls, complete: true, concurrency: 3 },
      clock,
      inspect: (ev) => {
        const ref = ev.actorRef as AnyActorRef;
        if ((ref as unknown as { logic: unknown }).logic !== toolCallMachine) return;
        if (ev.type === '@xstate.actor') {
          // A finished call has stopped before its done event reaches the scheduler (whose next call is then created).
          for (const r of live) if (r.getSnapshot().status !== 'active') live.delete(r);
          live.add(ref);
          ids.add(ref.id);
          parents.add(ref._parent);
        } else if (ev.type === '@xstate.snapshot' && ev.snapshot.status !== 'active') {
          live.delete(ref);
        }
        maxLive = Math.max(maxLive, live.size);
      },
    });
    const done = toPromise(actor);
    actor.start();
    await drive(clock, done);
    expect(ids.size).toBeGreaterThan(0);
    expect(maxLive).toBeLessThanOrEqual(3);
    expect([...ids].every((id) => /^call-\d+$/.test(id))).toBe(true);
    expect(live.size).toBe(0);
    expect([...parents]).toEqual([actor]);
    expect(Object.keys(actor.getSnapshot().children)).toEqual([]);
  });

  it('bodies get a deep-frozen view of the shared context: they can read it, not change it', async () => {
    const { clock, rt, seenContext } = runtime(undefined, { project: { name: 'demo', owners: ['ann'] } });
    const handle = rt.runCall(call('a'));
    await drive(clock, handle.result);
    const ctx = seenContext[0] as { project: { name: string; owners: string[] } };
    expect(ctx.project.name).toBe('demo');
    expect(Object.isFrozen(ctx.project.owners)).toBe(true);
    expect(() => ctx.project.owners.push('mallory')).toThrow(TypeError);
  });

  it('a call actor that crashes still gets its tool/result (TOOL_FAILED); the batch goes on', async () => {
    const { clock, rt } = runtime();
    // A broken port implementation: its pre-execute stage throws inside the machine.
    const broken = { ...rt.pipeline, hasPreExecute: () => true, preExecute: () => { throw new Error('port exploded'); } };
    const actor = createActor(schedulerMachine, { input: { pipeline: broken, log: rt.log, calls: [call('a'), call('b')], complete: true }, clock });
    const done = toPromise(actor);
    actor.start();
    await drive(clock, done);
    const results = rt.log.events().filter((e) => e.type === 'tool/result');
    expect(results.map((e) => e.type === 'tool/result' && e.result.error?.code)).toEqual([ErrorCode.TOOL_FAILED, ErrorCode.TOOL_FAILED]);
    expect(results[0]!.type === 'tool/result' && results[0]!.result.error?.message).toContain('port exploded');
  });
});

// Issue 37: what the scheduler reports of a batch, beyond its log events (each pinned from what a
// user of `dsh/machines` reads: its output, `callsOf`, the results' messages, a body's signal).
describe('scheduler: what it reports', () => {
  function runtimeWithExclusive(clock = new ManualClock()) {
    const reasons: unknown[] = [];
    const wait = defineTool({
      name: 'wait',
      input: z.object({ ms: z.number() }),
      isConcurrencySafe: () => true,
      execute: async (a, exec) => {
        exec.signal.addEventListener('abort', () => reasons.push(exec.signal.reason));
        await sleep(clock, a.ms, exec.signal);
        return `waited ${a.ms}`;
      },
    });
    const alone = defineTool({ name: 'alone', input: z.object({}), execute: async () => 'alone' });
    return { clock, rt: createRuntime({ tools: [wait, alone], clock }), reasons };
  }

  it('a concurrency limit below 1 is refused: the scheduler fails with a RangeError naming it', () => {
    const { rt } = runtimeWithExclusive();
    const actor = createActor(schedulerMachine, { input: { pipeline: rt.pipeline, log: rt.log, calls: [], concurrency: 0 } });
    actor.subscribe({ error: () => {} });
    actor.start();
    expect(actor.getSnapshot().status).toBe('error');
    expect(actor.getSnapshot().error).toEqual(new RangeError('concurrency limit must be >= 1, got 0'));
  });

  it('output.maxRunning is the most calls that ran at once: three parallel calls, then an exclusive one alone', async () => {
    const { clock, rt } = runtimeWithExclusive();
    const alone = { callId: 'x', toolName: 'alone', input: '{}' };
    const actor = createActor(schedulerMachine, { input: { pipeline: rt.pipeline, log: rt.log, calls: [call('a', 3), call('b', 2), call('c', 1), alone], complete: true, concurrency: 3 }, clock });
    const done = toPromise(actor);
    actor.start();
    const out = (await drive(clock, done)) as { maxRunning: number; results: { callId: string; isError: boolean }[] };
    expect(out.results.map((r) => [r.callId, r.isError])).toEqual([['a', false], ['b', false], ['c', false], ['x', false]]);
    expect(out.maxRunning).toBe(3);
  });

  it('callsOf: the calls in order with their status, the live actor of each running one, one frozen array per snapshot', async () => {
    const { clock, rt } = runtimeWithExclusive();
    const actor = createActor(schedulerMachine, { input: { pipeline: rt.pipeline, log: rt.log, calls: [call('a', 5), call('b', 1), call('c', 1)], complete: true, concurrency: 2 }, clock });
    const done = toPromise(actor);
    actor.start();
    const first = actor.getSnapshot();
    const calls = callsOf(first);
    expect(calls.map((c) => [c.index, c.request.callId, c.status])).toEqual([[0, 'a', 'running'], [1, 'b', 'running'], [2, 'c', 'queued']]);
    expect(calls[0]!.actor).toBe(first.children['call-0']);
    expect(calls[1]!.actor).toBe(first.children['call-1']);
    expect(calls[0]!.actor).toBeDefined();
    expect(calls[2]!.actor).toBeUndefined();
    expect(callsOf(first)).toBe(calls);
    expect(Object.isFrozen(calls) && Object.isFrozen(calls[0])).toBe(true);
    await drive(clock, done);
    const last = callsOf(actor.getSnapshot());
    expect(last.map((c) => [c.status, c.result?.isError, c.actor])).toEqual([['committed', false, undefined], ['committed', false, undefined], ['committed', false, undefined]]);
  });

  it("what the model reads for calls that never ran: a repeated callId, a call added to a cancelled batch, the model's stream failing", async () => {
    const { clock, rt } = runtimeWithExclusive();
    const messages = (log: typeof rt.log) => log.events().flatMap((e) => (e.type === 'tool/result' ? [`${e.callId}:${e.result.error?.code ?? 'ok'}:${e.result.error?.message ?? ''}`] : []));
    const dup = createActor(schedulerMachine, { input: { pipeline: rt.pipeline, log: rt.log, calls: [call('a'), call('a')], complete: true }, clock });
    const dupDone = toPromise(dup);
    dup.start();
    await drive(clock, dupDone);
    expect(messages(rt.log)).toEqual(['a:ok:', `a:${ErrorCode.DUPLICATE_CALL_ID}:callId "a" is used by an earlier call of this step; this call did not run`]);

    const late = runtimeWithExclusive();
    const cancelled = createActor(schedulerMachine, { input: { pipeline: late.rt.pipeline, log: late.rt.log, cancelled: true } }).start();
    cancelled.send({ type: 'CALL.ADD', request: call('b') });
    cancelled.send({ type: 'INPUT.END', finishReason: 'tool-calls' });
    expect(cancelled.getSnapshot().status).toBe('done');
    expect(messages(late.rt.log)).toEqual([`b:${ErrorCode.ABORTED_BEFORE_DISPATCH}:cancelled before the call was dispatched`]);

    const failed = runtimeWithExclusive();
    const alone = { callId: 'x', toolName: 'alone', input: '{}' };
    const cut = createActor(schedulerMachine, { input: { pipeline: failed.rt.pipeline, log: failed.rt.log, calls: [alone] } }).start();
    cut.send({ type: 'INPUT.END', finishReason: 'error', error: 'socket hang up' });
    expect(messages(failed.rt.log)).toEqual([`x:${ErrorCode.ABORTED_BEFORE_DISPATCH}:the model's response failed before this call was dispatched: socket hang up`]);
  });

  it("CANCEL's reason reaches the running bodies' abort signals", async () => {
    const { clock, rt, reasons } = runtimeWithExclusive();
    const actor = createActor(schedulerMachine, { input: { pipeline: rt.pipeline, log: rt.log, calls: [call('a', 50), call('b', 50)], complete: true }, clock });
    const done = toPromise(actor);
    actor.start();
    await new Promise((r) => setImmediate(r));
    actor.send({ type: 'CANCEL', reason: 'the user pressed stop' });
    await drive(clock, done);
    expect(reasons).toEqual(['the user pressed stop', 'the user pressed stop']);
  });

  it('a scheduler stopped from outside (its turn suspended, its step crashed) lets go of its running bodies, saying so', async () => {
    const { clock, rt, reasons } = runtimeWithExclusive();
    const actor = createActor(schedulerMachine, { input: { pipeline: rt.pipeline, log: rt.log, calls: [call('a', 50)], complete: true }, clock });
    actor.start();
    await new Promise((r) => setImmediate(r));
    actor.stop();
    expect(reasons).toEqual(['the scheduler was stopped']);
  });
});
