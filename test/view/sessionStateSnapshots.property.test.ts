/**
 * The session state's snapshots, whatever the order of events and whenever snapshots are taken
 * (fast-check): a snapshot once handed out never changes and is frozen all the way down; what a
 * snapshot holds does not depend on when earlier snapshots were taken (the state changes lists in
 * place only until a snapshot hands them out); a turn's `calls` are its steps' calls, in order,
 * the same objects.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/protocol/index.js';
import { deepFreeze } from '../../src/runtime/args.js';
import { SessionState, type SessionSnapshot } from '../../src/view/index.js';

type Op = { kind: 'event'; event: LogEvent } | { kind: 'snapshot' };

/** A plausible session: steps whose calls arrive in any batch order, progress, questions, answers, results. */
const sessionOps = fc
  .array(fc.array(fc.record({ index: fc.nat(20), ask: fc.boolean(), progress: fc.nat(2), result: fc.boolean() }), { maxLength: 8 }), { minLength: 1, maxLength: 4 })
  .chain((steps) => {
    const events: Array<Record<string, unknown>> = [{ type: 'turn/start', turnId: 't1', input: 'go' }];
    steps.forEach((calls, stepIndex) => {
      events.push({ type: 'step/start', turnId: 't1', stepIndex });
      events.push({ type: 'llm/stream', turnId: 't1', stepIndex, kind: 'text', text: `step ${stepIndex}` });
      const seen = new Set<number>();
      calls.forEach((c, i) => {
        if (seen.has(c.index)) return;
        seen.add(c.index);
        const at = { turnId: 't1', stepIndex, callId: `s${stepIndex}c${c.index}`, toolName: 'tool' };
        events.push({ type: 'tool/call', ...at, index: c.index, input: JSON.stringify({ i }), executionMode: 'parallel' });
        for (let p = 0; p < c.progress; p++) events.push({ type: 'tool/progress', ...at, message: `p${p}`, output: `line ${p}\n` });
        if (c.ask) events.push({ type: 'tool/approval-request', ...at, reason: 'asks' });
        if (c.ask) events.push({ type: 'tool/approval-answer', ...at, answer: 'allowed-once' });
        if (c.result) events.push({ type: 'tool/result', ...at, sourceEventSeqs: [], result: { callId: at.callId, toolName: 'tool', isError: false, content: 'ok', metadata: {} } });
      });
      events.push({ type: 'step/end', turnId: 't1', stepIndex, finishReason: 'tool-calls' });
    });
    events.push({ type: 'turn/end', turnId: 't1', outcome: 'completed' });
    // Frozen, as the session log hands its events out.
    const stamped = events.map((e, i) => deepFreeze({ ...e, seq: i + 1, time: i }) as unknown as LogEvent);
    return fc.array(fc.boolean(), { minLength: stamped.length, maxLength: stamped.length }).map((takes) => {
      const ops: Op[] = [];
      stamped.forEach((event, i) => {
        ops.push({ kind: 'event', event });
        if (takes[i]) ops.push({ kind: 'snapshot' });
      });
      return ops;
    });
  });

function isDeepFrozen(v: unknown, seen = new Set<unknown>()): boolean {
  if (v === null || typeof v !== 'object' || seen.has(v)) return true;
  seen.add(v);
  return Object.isFrozen(v) && Object.values(v).every((x) => isDeepFrozen(x, seen));
}

describe('session state snapshots', () => {
  it('never change once handed out, are frozen, and do not depend on when snapshots were taken', () => {
    fc.assert(
      fc.property(sessionOps, (ops) => {
        const state = new SessionState();
        const kept: Array<{ snap: SessionSnapshot; json: string }> = [];
        // The reference: a snapshot after every event (every list copied on every change).
        const reference = new SessionState();
        for (const op of ops) {
          if (op.kind === 'snapshot') {
            const snap = state.snapshot();
            kept.push({ snap, json: JSON.stringify(snap) });
            continue;
          }
          state.applyEvent(op.event);
          reference.applyEvent(op.event);
          reference.snapshot();
        }
        const last = state.snapshot();
        for (const k of kept) {
          expect(JSON.stringify(k.snap)).toBe(k.json);
          expect(isDeepFrozen(k.snap)).toBe(true);
        }
        expect(isDeepFrozen(last)).toBe(true);
        expect(JSON.stringify(last)).toBe(JSON.stringify(reference.snapshot()));
        for (const turn of last.turns) {
          const flat = turn.steps.flatMap((s) => s.calls);
          expect(turn.calls.length).toBe(flat.length);
          turn.calls.forEach((c, i) => expect(c).toBe(flat[i]));
          for (const s of turn.steps) expect(s.calls.map((c) => c.index)).toEqual([...s.calls.map((c) => c.index)].sort((a, b) => a - b));
        }
      }),
      { numRuns: Number(process.env.DSH_PROPERTY_RUNS ?? 300) },
    );
  });

  it('a change to one call keeps every other call, step and turn list that did not change by reference', () => {
    const state = new SessionState();
    let seq = 0;
    const ev = (e: Record<string, unknown>) => state.applyEvent(deepFreeze({ ...e, seq: ++seq, time: seq }) as unknown as LogEvent);
    ev({ type: 'turn/start', turnId: 't1', input: 'go' });
    ev({ type: 'step/start', turnId: 't1', stepIndex: 0 });
    for (const i of [0, 1, 2]) ev({ type: 'tool/call', turnId: 't1', stepIndex: 0, callId: `c${i}`, toolName: 'tool', index: i, input: '{}', executionMode: 'parallel' });
    ev({ type: 'step/end', turnId: 't1', stepIndex: 0, finishReason: 'tool-calls' });
    ev({ type: 'step/start', turnId: 't1', stepIndex: 1 });
    const before = state.snapshot();
    ev({ type: 'llm/stream', turnId: 't1', stepIndex: 1, kind: 'text', text: 'hello' });
    const textChanged = state.snapshot();
    // A step's text changed: the turn's flat calls list is the same list.
    expect(textChanged.turns[0]!.calls).toBe(before.turns[0]!.calls);
    expect(textChanged.turns[0]!.steps[0]).toBe(before.turns[0]!.steps[0]);
    ev({ type: 'tool/result', turnId: 't1', stepIndex: 0, callId: 'c1', toolName: 'tool', sourceEventSeqs: [], result: { callId: 'c1', toolName: 'tool', isError: false, content: 'ok', metadata: {} } });
    const after = state.snapshot();
    const [b, a] = [before.turns[0]!, after.turns[0]!];
    expect(a.calls).not.toBe(b.calls);
    expect(a.calls[0]).toBe(b.calls[0]);
    expect(a.calls[2]).toBe(b.calls[2]);
    expect(a.calls[1]!.stage).toBe('done');
    expect(a.steps[1]).toBe(textChanged.turns[0]!.steps[1]);
    expect(b.calls[1]!.stage).toBe('queued');
  });
});
