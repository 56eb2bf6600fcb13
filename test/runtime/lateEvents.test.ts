/**
 * Issue 11.8 (SPEC §8.11, §8.13): nothing of a step lands after its `step/end`. When a step's actor
 * crashed, the turn closes the step (INTERRUPTED results, `step/end`) while its calls may still be
 * running; whatever they log later (results, `hook/failed`, `tool/spilled`, approval answers,
 * warnings) is routed: each late event is dropped and replaced by one `LATE_EVENT_DISCARDED`
 * warning that keeps the dropped event in its data (nothing is lost), attached to the turn while the
 * turn is open, else to the session (no turnId), so nothing lands in a closed step or turn either.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import type { ApprovalAnswer, LogEvent, LogEventOf } from '../../src/protocol/index.js';
import { ManualClock, sleep } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { settle } from './settle.js';

function crashingSetup() {
  const clock = new ManualClock();
  const trace: string[] = [];
  // Finishes at once; a slow post-execute review then holds its result past the crash, so the
  // spill (and the observers) run after the step was closed.
  const big = defineTool({ name: 'big', input: z.object({}), isConcurrencySafe: () => true, execute: () => 'line of output\n'.repeat(100) });
  const guarded = defineTool({
    name: 'guarded',
    input: z.object({}),
    isConcurrencySafe: () => true,
    execute: () => {
      trace.push('guarded ran');
      return 'ran';
    },
  });
  const slow = defineTool({
    name: 'slow',
    input: z.object({}),
    isConcurrencySafe: () => true,
    execute: async (_a, exec) => {
      await sleep(clock, 500, exec.signal);
      trace.push('slow finished');
      return 'slow done';
    },
  });
  const rt = createRuntime({
    tools: [big, guarded, slow],
    clock,
    maxInlineBytes: 200,
    approval: { request: (_req, signal) => sleep(clock, 100, signal).then((): ApprovalAnswer => 'allowed-once') },
    // A broken retry policy crashes the step when the stream fails after the calls arrived.
    retryPolicy: {
      maxAttempts: 3,
      decide: () => {
        throw new Error('policy bug');
      },
    },
  });
  rt.hooks.on('tools/pre-execute', 'ask-for-guarded', (call, next) => (call.toolName === 'guarded' ? { kind: 'ask', reason: 'check' } : next()));
  rt.hooks.on('tools/post-execute', 'slow-review', () => sleep(clock, 100).then(() => ({ kind: 'accept' as const })), { appliesTo: (_d, call) => call.toolName === 'big' });
  rt.hooks.on('tools/result', 'flaky-audit', () => {
    throw new Error('audit sink down');
  });
  const model = scriptedModel(
    [
      {
        toolCalls: [{ toolName: 'big', input: {} }, { toolName: 'guarded', input: {} }, { toolName: 'slow', input: {} }],
        // The error comes a moment after the calls (a later chunk): they are dispatched, and `big`
        // has run, before the step crashes.
        streamError: { error: new Error('connection reset'), as: 'part' },
        chunkDelayMs: (part) => (part.type === 'error' ? 1 : 0),
      },
    ],
    { clock },
  );
  return { clock, rt, model, trace };
}

const stepKey = (e: LogEvent) => ('turnId' in e && 'stepIndex' in e && e.turnId !== undefined && e.stepIndex !== undefined ? `${e.turnId}#${e.stepIndex}` : undefined);

describe('nothing of a step lands after its step/end (issue 11.8)', () => {
  it('after a crashed step, late results, hook/failed, tool/spilled and approval events become LATE_EVENT_DISCARDED warnings', async () => {
    const { clock, rt, model } = crashingSetup();
    const out = await settle(clock, rt.startTurn({ model, input: 'go' }).done);
    expect(out.outcome).toBe('failed');
    await clock.advance(1_000); // let the orphaned calls finish
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    const events = rt.log.events();

    // Nothing with a step's coordinates after that step's step/end.
    const endSeq = new Map(events.flatMap((e) => (e.type === 'step/end' ? [[stepKey(e)!, e.seq] as const] : [])));
    const late = events.filter((e) => e.type !== 'step/end' && stepKey(e) !== undefined && e.seq > (endSeq.get(stepKey(e)!) ?? Infinity));
    expect(late.map((e) => e.type)).toEqual([]);
    // Nothing of the turn after its turn/end.
    const turnEnd = events.find((e) => e.type === 'turn/end')!.seq;
    expect(events.filter((e) => e.seq > turnEnd && 'turnId' in e && e.turnId !== undefined).map((e) => e.type)).toEqual([]);

    // Each dropped event is one warning that keeps it whole.
    const warnings = events.filter((e): e is LogEventOf<'warning'> => e.type === 'warning' && e.code === 'LATE_EVENT_DISCARDED');
    const dropped = warnings.map((w) => (w.data as { event: LogEvent }).event);
    const droppedTypes = dropped.map((e) => e.type);
    for (const t of ['tool/spilled', 'hook/failed', 'tool/approval-answer', 'tool/result'] as const) expect(droppedTypes).toContain(t);
    for (const e of dropped) expect(e).toMatchObject({ turnId: 'turn-1', stepIndex: 0 });
    const hook = dropped.find((e) => e.type === 'hook/failed');
    expect(hook).toMatchObject({ listener: 'flaky-audit', message: expect.stringMatching(/audit sink down/) });
    const stepEnd = endSeq.get('turn-1#0')!;
    for (const w of warnings) {
      expect(w.seq).toBeGreaterThan(stepEnd);
      expect(w.stepIndex).toBeUndefined();
      // Attached to the turn while it is open; once it has ended, a session-level warning.
      expect(w.turnId).toBe(w.seq < turnEnd ? 'turn-1' : undefined);
      expect(w.message).toMatch(/step 0 of turn-1/);
    }
    expect(warnings.some((w) => w.seq > turnEnd)).toBe(true);
  });

  it('a session goes on normally after such a crash: the next turn is not disturbed by the late events', async () => {
    const { clock, rt, model } = crashingSetup();
    await settle(clock, rt.startTurn({ model, input: 'go' }).done);
    // A slow answer: the first turn's orphaned calls finish while this turn runs.
    const slow = scriptedModel([{ text: ['fi', 'ne'] }], { clock, chunkDelayMs: 60 });
    const next = await settle(clock, rt.startTurn({ model: slow, input: 'again' }).done);
    await clock.advance(1_000);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(next.outcome).toBe('completed');
    const events = rt.log.events();
    const t2 = events.filter((e) => 'turnId' in e && e.turnId === 'turn-2');
    expect(t2.map((e) => e.type)).toEqual(['turn/start', 'step/start', 'llm/stream', 'step/end', 'turn/end']);
    // Within the second turn, only its own events and the session-level warnings for the late ones.
    const inside = events.filter((e) => e.seq > t2[0]!.seq && e.seq < t2.at(-1)!.seq);
    expect(inside.filter((e) => 'turnId' in e && e.turnId !== undefined && e.turnId !== 'turn-2').map((e) => e.type)).toEqual([]);
    expect(inside.some((e) => e.type === 'warning' && e.code === 'LATE_EVENT_DISCARDED')).toBe(true);
  });

  it("a crashed step's calls are stopped: a pending approval is withdrawn (the tool never runs), a running body is aborted", async () => {
    const { clock, rt, model, trace } = crashingSetup();
    const out = await settle(clock, rt.startTurn({ model, input: 'go' }).done);
    expect(out.outcome).toBe('failed');
    await clock.advance(2_000);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(trace).toEqual([]);
    const dropped = rt.log
      .events()
      .flatMap((e) => (e.type === 'warning' && e.code === 'LATE_EVENT_DISCARDED' ? [(e.data as { event: LogEvent }).event] : []));
    const answer = dropped.find((e) => e.type === 'tool/approval-answer');
    expect(answer).toMatchObject({ answer: 'cancelled' });
    const codes = dropped.flatMap((e) => (e.type === 'tool/result' ? [`${e.toolName}:${e.result.error?.code ?? 'ok'}`] : []));
    expect(codes).toEqual(expect.arrayContaining(['guarded:ABORTED_BEFORE_DISPATCH', 'slow:ABORTED']));
  });
});
