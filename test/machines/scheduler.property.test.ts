import fc from 'fast-check';
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { schedulerMachine } from '../../machines/scheduler.js';
import { ErrorCode, LogEventSchema, type LogEvent } from '../../src/protocol/index.js';
import { ManualClock, sleep } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';

const callArb = fc.record({
  safe: fc.boolean(),
  duration: fc.integer({ min: 0, max: 40 }),
  fail: fc.boolean(),
  invalid: fc.integer({ min: 0, max: 9 }).map((n) => n === 0), // ~10% malformed calls
});

const scenarioArb = fc.record({
  calls: fc.array(callArb, { minLength: 0, maxLength: 14 }),
  limit: fc.integer({ min: 1, max: 5 }),
  cancelAt: fc.option(fc.integer({ min: 0, max: 120 }), { nil: undefined }),
});

/** Runs one scheduler batch on a fake clock and returns what was observed. */
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

async function runScenario(s: Scenario) {
  const clock = new ManualClock();
  const running = new Map<number, boolean>(); // index -> exclusive?
  const started: Array<{ index: number; at: number }> = [];
  const settledAt = new Map<number, number>();
  // Order of happenings at equal fake times: body settlements and the cancel.
  let order = 0;
  const settledOrder = new Map<number, number>();
  const violations: string[] = [];
  let maxInFlight = 0;

  const work = defineTool({
    name: 'work',
    input: z.object({ i: z.number(), safe: z.boolean(), duration: z.number(), fail: z.boolean() }),
    isConcurrencySafe: (a) => a.safe,
    execute: async (a, exec) => {
      if ([...running.values()].some((ex) => ex)) violations.push(`call ${a.i} started while an exclusive call ran`);
      if (!a.safe && running.size > 0) violations.push(`exclusive call ${a.i} started while ${running.size} others ran`);
      running.set(a.i, !a.safe);
      maxInFlight = Math.max(maxInFlight, running.size);
      started.push({ index: a.i, at: clock.now() });
      try {
        await sleep(clock, a.duration, exec.signal);
        if (a.fail) throw new Error(`call ${a.i} failed on purpose`);
        return `ok ${a.i}`;
      } finally {
        running.delete(a.i);
        settledAt.set(a.i, clock.now());
        settledOrder.set(a.i, ++order);
      }
    },
  });
  const rt = createRuntime({ tools: [work], clock });
  const commitAt = new Map<string, number>();
  rt.log.subscribe((e) => {
    if (e.type === 'tool/result') commitAt.set(e.callId, clock.now());
  });
  const calls = s.calls.map((c, i) => ({
    callId: `c${i}`,
    toolName: 'work',
    input: c.invalid ? '{"i": "not a number"' : JSON.stringify({ i, safe: c.safe, duration: c.duration, fail: c.fail }),
  }));
  const actor = createActor(schedulerMachine, {
    input: { pipeline: rt.pipeline, log: rt.log, concurrency: s.limit, calls, complete: true },
    clock,
  });
  let cancelledAt: number | undefined;
  let cancelOrder: number | undefined;
  if (s.cancelAt !== undefined) {
    clock.setTimeout(() => {
      if (actor.getSnapshot().status !== 'active') return;
      cancelledAt = clock.now();
      cancelOrder = ++order;
      actor.send({ type: 'CANCEL', reason: 'test cancel' });
    }, s.cancelAt);
  }
  const done = toPromise(actor);
  actor.start();
  let finished = false;
  void done.then(() => (finished = true));
  for (let guard = 0; !finished && guard < 10_000; guard++) {
    if (!(await clock.runNext())) await clock.advance(1);
  }
  const output = await done;
  return { rt, output, started, settledAt, settledOrder, commitAt, violations, maxInFlight, cancelledAt, cancelOrder, calls };
}

describe('scheduler invariants (property-based, fake clock)', () => {
  it('pairs, order, streamed commit, exclusivity, limit, cancellation', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const r = await runScenario(s);
        const events = r.rt.log.events();
        for (const e of events) LogEventSchema.parse(e);
        // seq strictly increasing from 1
        events.forEach((e: LogEvent, i: number) => expect(e.seq).toBe(i + 1));
        const callEvents = events.filter((e) => e.type === 'tool/call');
        const resultEvents = events.filter((e) => e.type === 'tool/result');
        // exactly one tool/result per tool/call, in array order
        expect(callEvents.map((e) => e.callId)).toEqual(r.calls.map((c) => c.callId));
        expect(resultEvents.map((e) => e.callId)).toEqual(r.calls.map((c) => c.callId));
        // sourceEventSeqs points at the matching tool/call
        for (const res of resultEvents) {
          const src = events[res.sourceEventSeqs[0]! - 1]!;
          expect(src.type).toBe('tool/call');
          expect(src.type === 'tool/call' && src.callId).toBe(res.callId);
        }
        expect(r.violations).toEqual([]);
        expect(r.maxInFlight).toBeLessThanOrEqual(s.limit);
        // result i is committed no later than the moment 0..i are all settled
        let settledPrefix = 0;
        r.calls.forEach((c, i) => {
          const settled = r.settledAt.get(i) ?? r.commitAt.get(c.callId)!;
          settledPrefix = Math.max(settledPrefix, settled);
          expect(r.commitAt.get(c.callId)).toBeLessThanOrEqual(settledPrefix);
        });
        // after a cancel, calls that never started end ABORTED_BEFORE_DISPATCH, in order
        const startedSet = new Set(r.started.map((x) => x.index));
        resultEvents.forEach((res, i) => {
          const spec = s.calls[i]!;
          const code = res.result.error?.code;
          if (spec.invalid) {
            // Validated at dispatch; a cancel before that makes it ABORTED_BEFORE_DISPATCH like any other.
            expect(r.cancelledAt === undefined ? [ErrorCode.INVALID_ARGS] : [ErrorCode.INVALID_ARGS, ErrorCode.ABORTED_BEFORE_DISPATCH]).toContain(code);
          }
          else if (!startedSet.has(i)) {
            expect(r.cancelledAt).toBeDefined();
            expect(code).toBe(ErrorCode.ABORTED_BEFORE_DISPATCH);
          } else if (r.cancelOrder !== undefined && r.settledOrder.get(i)! > r.cancelOrder) {
            expect(code).toBe(ErrorCode.ABORTED);
          } else if (spec.fail) expect(code).toBe(ErrorCode.TOOL_FAILED);
          else expect(res.result.isError).toBe(false);
        });
        if (r.cancelledAt === undefined) expect(startedSet.size).toBe(s.calls.filter((c) => !c.invalid).length);
        expect(r.output.results.map((x) => x.callId)).toEqual(r.calls.map((c) => c.callId));
      }),
      { numRuns: 150 },
    );
  });
});
