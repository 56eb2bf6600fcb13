/**
 * `SessionState` (src/view/sessionState.ts): what does not change keeps its reference (docs/web.md,
 * "Values never change": a change builds new objects only along the path to what changed, and
 * `getSnapshot()` is the same object until something changes), so a selector that compares by
 * reference (React's memo, `useSyncExternalStore`) re-renders only the parts that changed. Here:
 * page actions and events that change nothing, and the lists around a change that does.
 */
import { describe, expect, it } from 'vitest';
import type { CallStageEvent } from '../../src/runtime/inspection/index.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { SessionState } from '../../src/view/sessionState.js';

let seq = 0;
const ev = (e: Record<string, unknown>) => ({ time: 0, ...e, seq: ++seq }) as unknown as LogEvent;
const call = (turnId: string, stepIndex: number, callId: string, index: number) =>
  ev({ type: 'tool/call', turnId, stepIndex, callId, toolName: 'write', input: '{}', index, executionMode: 'parallel' });
const result = (turnId: string, stepIndex: number, callId: string) =>
  ev({ type: 'tool/result', turnId, stepIndex, callId, toolName: 'write', sourceEventSeqs: [1], result: { callId, toolName: 'write', isError: false, content: 'done', metadata: {} } });
const stage = (type: 'stage/entered' | 'stage/exited', s: string, callId: string) => ({ type, stage: s, callId, toolName: 'write', time: 0, turnId: 't1', stepIndex: 0 }) as unknown as CallStageEvent;

describe('what changes nothing keeps every reference', () => {
  it('the page saying what the view already shows: the same turn state, the same answerable questions', () => {
    let canAnswer = false;
    const s = new SessionState(() => canAnswer);
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'go' }));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(ev({ type: 'tool/approval-request', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write' }));
    const before = s.snapshot();
    s.setTurnState('t1', 'running');
    s.setAnswerable(() => canAnswer);
    expect(s.snapshot()).toBe(before);
    canAnswer = true;
    s.setAnswerable(() => canAnswer);
    expect(s.snapshot()).not.toBe(before);
    expect(s.snapshot().approvals[0]!.answerable).toBe(true);
  });

  it('a stage event that repeats the call’s stage, or comes after its result, keeps the turn', () => {
    const s = new SessionState();
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'go' }));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(call('t1', 0, 'b', 1));
    s.applyStage(stage('stage/entered', 'executing', 'a'));
    const executing = s.snapshot().turns[0]!;
    s.applyStage(stage('stage/entered', 'executing', 'a'));
    expect(s.snapshot().turns[0]).toBe(executing);
    s.applyEvent(result('t1', 0, 'b'));
    const done = s.snapshot().turns[0]!;
    s.applyStage(stage('stage/exited', 'finalizing', 'b'));
    expect(s.snapshot().turns[0]).toBe(done);
    expect(done.calls.map((c) => c.stage)).toEqual(['executing', 'done']);
  });

  it('a `step/start` for the step the streamed text already opened, and a delta the log is already ahead of, keep the turn', () => {
    const s = new SessionState();
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'go' }));
    s.applyDelta('t1', { type: 'text-delta', stepIndex: 0, delta: 'He' });
    const streamed = s.snapshot().turns[0]!;
    expect(streamed.steps.map((x) => [x.stepIndex, x.state, x.text])).toEqual([[0, 'running', 'He']]);
    s.applyEvent(ev({ type: 'step/start', turnId: 't1', stepIndex: 0 }));
    expect(s.snapshot().turns[0]).toBe(streamed);
    s.applyEvent(ev({ type: 'llm/stream', turnId: 't1', stepIndex: 0, kind: 'text', text: 'Hello' }));
    const logged = s.snapshot().turns[0]!;
    expect(logged.steps[0]!.text).toBe('Hello');
    s.applyDelta('t1', { type: 'text-delta', stepIndex: 0, delta: 'l' });
    expect(s.snapshot().turns[0]).toBe(logged);
  });

  it('a result of a call without an open question keeps the question list (empty or not)', () => {
    const s = new SessionState();
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'go' }));
    for (const [id, i] of [['a', 0], ['b', 1], ['c', 2]] as const) s.applyEvent(call('t1', 0, id, i));
    const none = s.snapshot().approvals;
    s.applyEvent(result('t1', 0, 'c'));
    expect(s.snapshot().approvals).toBe(none);
    s.applyEvent(ev({ type: 'tool/approval-request', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write' }));
    const one = s.snapshot().approvals;
    s.applyEvent(result('t1', 0, 'b'));
    expect(s.snapshot().approvals).toBe(one);
    expect(one.map((a) => a.callId)).toEqual(['a']);
  });
});

describe('around a change', () => {
  it('a result in a step after a later step began: the turn’s calls show it, the very objects of its step; the later step is kept', () => {
    const s = new SessionState();
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'go' }));
    s.applyEvent(ev({ type: 'step/start', turnId: 't1', stepIndex: 0 }));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(call('t1', 0, 'b', 1));
    const before = s.snapshot().turns[0]!;
    s.applyEvent(ev({ type: 'step/start', turnId: 't1', stepIndex: 1 }));
    s.applyEvent(result('t1', 0, 'b'));
    const t = s.snapshot().turns[0]!;
    expect(t.calls.map((c) => c.stage)).toEqual(['queued', 'done']);
    expect(t.steps[0]!.calls.map((c) => c.stage)).toEqual(['queued', 'done']);
    expect(t.calls[1]).toBe(t.steps[0]!.calls[1]);
    expect(t.calls[0]).toBe(before.calls[0]);
    // And once more (the lists are this snapshot's now): the same holds.
    s.applyEvent(result('t1', 0, 'a'));
    const u = s.snapshot().turns[0]!;
    expect(u.calls.map((c) => c.stage)).toEqual(['done', 'done']);
    expect(u.calls[1]).toBe(t.calls[1]);
    expect(u.steps[1]).toBe(t.steps[1]);
  });
});
