/**
 * `SessionState` (src/view/sessionState.ts, exported by `dsh`): the projection a page renders,
 * fed by hand with the log events, deltas, stage events and page actions of one session, each
 * expected value read from the view's documented rules (docs/web.md, src/view/viewTypes.ts): the
 * log is the truth, live deltas run ahead of it, a page's own actions never undo what the log says.
 */
import { describe, expect, it } from 'vitest';
import type { CallStageEvent } from '../../src/runtime/inspection/index.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { PROGRESS_OUTPUT_CHARS, SessionState } from '../../src/view/sessionState.js';

let seq = 0;
const ev = (e: Record<string, unknown>) => ({ time: 0, ...e, seq: ++seq }) as unknown as LogEvent;
const call = (turnId: string, stepIndex: number, callId: string, index: number, input: unknown = '{"path":"a.txt"}') =>
  ev({ type: 'tool/call', turnId, stepIndex, callId, toolName: 'write', input, index, executionMode: 'exclusive' });
const stage = (type: 'stage/entered' | 'stage/exited', s: string, callId: string, turnId: string | undefined = 't1', stepIndex: number | undefined = 0) =>
  ({ type, stage: s, callId, toolName: 'write', time: 0, ...(turnId !== undefined ? { turnId } : {}), ...(stepIndex !== undefined ? { stepIndex } : {}) }) as unknown as CallStageEvent;
const ok = (callId: string) => ({ callId, toolName: 'write', isError: false, content: 'done', metadata: {} });

describe('SessionState: turns and what the page asks', () => {
  it('a queued turn, the page’s states and the log’s: a cancel cannot un-queue, the log’s suspend is not undone, an ended turn stays ended', () => {
    const s = new SessionState();
    s.queueTurn('t1', 'go', { kind: 'follow-up', after: 't0' });
    expect(s.snapshot().turns).toStrictEqual([{ turnId: 't1', input: 'go', followUp: { kind: 'follow-up', after: 't0' }, state: 'queued', steps: [], calls: [], steers: [] }]);
    const before = s.snapshot();
    s.queueTurn('t1', 'again');
    s.setTurnState('t1', 'cancelling');
    s.setTurnState('nobody', 'running');
    expect(s.snapshot()).toBe(before);
    expect(before.activeTurnId).toBeUndefined();
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'go, really' }));
    expect(s.snapshot().turns[0]).toMatchObject({ state: 'running', input: 'go, really', followUp: { kind: 'follow-up', after: 't0' } });
    expect(s.snapshot().activeTurnId).toBe('t1');
    s.setTurnState('t1', 'cancelling');
    expect(s.snapshot().turns[0]!.state).toBe('cancelling');
    expect(s.snapshot().activeTurnId).toBe('t1');
    s.applyEvent(ev({ type: 'turn/suspended', turnId: 't1', stepIndex: 0, held: [] }));
    s.setTurnState('t1', 'suspending');
    s.setTurnState('t1', 'cancelling');
    expect(s.snapshot().turns[0]!.state).toBe('suspended');
    expect(s.snapshot().suspendedTurnId).toBe('t1');
    expect(s.snapshot().activeTurnId).toBeUndefined();
    s.setTurnState('t1', 'running');
    s.setTurnState('t1', 'ended', { outcome: 'failed', error: 'the actor failed' });
    expect(s.snapshot().turns[0]).toMatchObject({ state: 'ended', outcome: 'failed', error: 'the actor failed' });
    s.setTurnState('t1', 'running');
    expect(s.snapshot().turns[0]!.state).toBe('ended');
    expect(s.snapshot().suspendedTurnId).toBeUndefined();
  });

  it("a turn the log starts that the page did not queue; a queued turn's follow-up taken from the log", () => {
    const s = new SessionState();
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'hi', followUp: { kind: 'late-steer', after: 't0' } }));
    s.queueTurn('t2', 'next');
    s.applyEvent(ev({ type: 'turn/start', turnId: 't2', input: 'next', followUp: { kind: 'follow-up', after: 't1' } }));
    expect(s.snapshot().turns.map((t) => [t.turnId, t.state, t.followUp])).toStrictEqual([
      ['t1', 'running', { kind: 'late-steer', after: 't0' }],
      ['t2', 'running', { kind: 'follow-up', after: 't1' }],
    ]);
    // A `turn/start` for a turn already running changes nothing.
    const before = s.snapshot().turns[0];
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'other' }));
    expect(s.snapshot().turns[0]).toBe(before);
  });

  it('steers: waiting, then delivered in the step the log names, or a follow-up turn when too late; one the page did not send is shown delivered', () => {
    const s = new SessionState();
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'go' }));
    expect(s.steerSent('t1', 'left')).toBe(0);
    expect(s.steerSent('t1', 'right')).toBe(1);
    expect(s.snapshot().turns[0]!.steers).toStrictEqual([{ text: 'left', status: 'waiting' }, { text: 'right', status: 'waiting' }]);
    s.applyEvent(ev({ type: 'user/steer', turnId: 't1', stepIndex: 2, text: 'right' }));
    s.applyEvent(ev({ type: 'user/steer', turnId: 't1', stepIndex: 3, text: 'from elsewhere' }));
    s.steerBecameTurn('t1', 1, 't9'); // delivered already: stays delivered
    s.steerBecameTurn('t1', 0, 't2');
    s.steerBecameTurn('t1', 7, 't3'); // no such steer
    expect(s.snapshot().turns[0]!.steers).toStrictEqual([
      { text: 'left', status: 'follow-up', turnId: 't2' },
      { text: 'right', status: 'delivered', stepIndex: 2 },
      { text: 'from elsewhere', status: 'delivered', stepIndex: 3 },
    ]);
  });
});

describe('SessionState: steps and their text', () => {
  it('live deltas run ahead of the log; the log wins once it has as much, and always once the step ended; a failed request drops its text', () => {
    const s = new SessionState();
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'go' }));
    s.applyEvent(ev({ type: 'step/start', turnId: 't1', stepIndex: 0 }));
    expect(s.snapshot().turns[0]!.steps).toStrictEqual([{ stepIndex: 0, state: 'running', text: '', reasoning: '', calls: [], requestErrors: [] }]);
    s.applyDelta('t1', { type: 'text-delta', stepIndex: 0, delta: 'Hel' });
    s.applyDelta('t1', { type: 'reasoning-delta', stepIndex: 0, delta: 'hmm' });
    s.applyDelta('t1', { type: 'request-error', stepIndex: 0, action: 'retry' } as never);
    s.applyDelta('nobody', { type: 'text-delta', stepIndex: 0, delta: 'x' });
    expect(s.snapshot().turns[0]!.steps[0]).toMatchObject({ text: 'Hel', reasoning: 'hmm' });
    expect(s.snapshot().turns).toHaveLength(1);
    s.applyEvent(ev({ type: 'llm/stream', turnId: 't1', stepIndex: 0, kind: 'text', text: 'Hello' }));
    s.applyEvent(ev({ type: 'llm/stream', turnId: 't1', stepIndex: 0, kind: 'reasoning', text: 'h' }));
    expect(s.snapshot().turns[0]!.steps[0]).toMatchObject({ text: 'Hello', reasoning: 'hmm' });
    s.applyEvent(ev({ type: 'agent/request-error', turnId: 't1', stepIndex: 0, message: 'overloaded', action: 'retry' }));
    expect(s.snapshot().turns[0]!.steps[0]).toMatchObject({ text: '', reasoning: '', requestErrors: ['overloaded'] });
    s.applyDelta('t1', { type: 'text-delta', stepIndex: 0, delta: 'All good, and more' });
    s.applyEvent(ev({ type: 'llm/stream', turnId: 't1', stepIndex: 0, kind: 'text', text: 'All good' }));
    expect(s.snapshot().turns[0]!.steps[0]!.text).toBe('All good, and more');
    s.applyEvent(ev({ type: 'step/end', turnId: 't1', stepIndex: 0, finishReason: 'stop' }));
    expect(s.snapshot().turns[0]!.steps[0]).toMatchObject({ state: 'ended', finishReason: 'stop', text: 'All good' });
    s.applyEvent(ev({ type: 'turn/end', turnId: 't1', outcome: 'completed' }));
    expect(s.snapshot().turns[0]).toMatchObject({ state: 'ended', outcome: 'completed', answer: 'All good' });
  });

  it('steps stay in index order whatever order they begin in; an event at or below the last seq applied is ignored', () => {
    const s = new SessionState();
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'go' }));
    s.applyEvent(ev({ type: 'step/start', turnId: 't1', stepIndex: 2 }));
    s.applyEvent(ev({ type: 'step/start', turnId: 't1', stepIndex: 0 }));
    s.applyEvent(ev({ type: 'step/start', turnId: 't1', stepIndex: 1 }));
    expect(s.snapshot().turns[0]!.steps.map((x) => x.stepIndex)).toEqual([0, 1, 2]);
    const last = s.snapshot();
    s.applyEvent({ ...ev({ type: 'step/end', turnId: 't1', stepIndex: 0, finishReason: 'stop' }), seq: last.lastSeq } as LogEvent);
    expect(s.snapshot()).toBe(last);
    expect(s.snapshot().lastSeq).toBe(last.lastSeq);
  });
});

describe('SessionState: calls', () => {
  it('in the model’s order, with stages from the stage stream (early ones kept until the call is logged), the log’s `done` final', () => {
    const s = new SessionState();
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'go' }));
    s.applyStage(stage('stage/entered', 'validating', 'b'));
    s.applyStage(stage('stage/entered', 'validating', 'lone', undefined, undefined));
    s.applyEvent(call('t1', 0, 'b', 1, '{"path":"b.txt"}'));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(call('t1', 0, 'a', 0)); // logged twice: one row
    const calls = () => s.snapshot().turns[0]!.calls;
    expect(calls().map((c) => [c.callId, c.index, c.stage, c.args])).toStrictEqual([
      ['a', 0, 'queued', { path: 'a.txt' }],
      ['b', 1, 'validating', { path: 'b.txt' }],
    ]);
    expect(calls()[0]).toMatchObject({ key: 't1/0/a', turnId: 't1', stepIndex: 0, toolName: 'write', input: '{"path":"a.txt"}', executionMode: 'exclusive' });
    s.applyStage(stage('stage/exited', 'validating', 'a'));
    expect(calls()[0]!.stage).toBe('queued');
    s.applyStage(stage('stage/entered', 'executing', 'a'));
    s.applyStage(stage('stage/exited', 'guard', 'a'));
    expect(calls()[0]!.stage).toBe('executing');
    s.applyStage(stage('stage/exited', 'finalizing', 'a'));
    expect(calls()[0]!.stage).toBe('settled');
    s.applyEvent(ev({ type: 'tool/result', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write', sourceEventSeqs: [], result: ok('a') }));
    s.applyStage(stage('stage/entered', 'executing', 'a'));
    expect(calls()[0]).toMatchObject({ stage: 'done', result: ok('a') });
    // A lone call's events (no turn) are not a turn's.
    s.applyEvent(ev({ type: 'tool/call', callId: 'lone', toolName: 'write', input: '{}', index: 0, executionMode: 'exclusive' }));
    s.applyEvent(ev({ type: 'tool/result', callId: 'lone', toolName: 'write', sourceEventSeqs: [], result: ok('lone') }));
    expect(s.snapshot().turns).toHaveLength(1);
  });

  it('a turn’s calls are every step’s, in step order', () => {
    const s = new SessionState();
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'go' }));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(call('t1', 1, 'c', 0));
    s.applyEvent(call('t1', 0, 'b', 1));
    s.applyEvent(call('t1', 1, 'd', 1));
    expect(s.snapshot().turns[0]!.calls.map((c) => c.callId)).toEqual(['a', 'b', 'c', 'd']);
    s.applyEvent(ev({ type: 'tool/result', turnId: 't1', stepIndex: 1, callId: 'd', toolName: 'write', sourceEventSeqs: [], result: ok('d') }));
    expect(s.snapshot().turns[0]!.calls.map((c) => c.stage)).toEqual(['queued', 'queued', 'queued', 'done']);
    expect(s.snapshot().turns[0]!.steps.map((x) => x.calls.map((c) => c.callId))).toEqual([['a', 'b'], ['c', 'd']]);
  });

  it('an approval: asked (answerable as the page says, now and when that changes), answered, and gone; progress merges', () => {
    let canAnswer = false;
    const s = new SessionState(() => canAnswer);
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'go' }));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(ev({ type: 'tool/approval-request', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write', reason: 'a change' }));
    const approval = { id: 't1/0/a', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write', args: { path: 'a.txt' }, reason: 'a change', answerable: false, seq };
    expect(s.snapshot().approvals).toStrictEqual([approval]);
    expect(s.snapshot().turns[0]!.calls[0]).toMatchObject({ stage: 'awaitingApproval', approval });
    canAnswer = true;
    s.setAnswerable(() => canAnswer);
    expect(s.snapshot().approvals[0]!.answerable).toBe(true);
    expect(s.snapshot().turns[0]!.calls[0]!.approval?.answerable).toBe(true);
    s.applyEvent(ev({ type: 'tool/approval-answer', turnId: 't1', stepIndex: 0, callId: 'a', answer: 'allowed-once' }));
    expect(s.snapshot().approvals).toStrictEqual([]);
    const c = s.snapshot().turns[0]!.calls[0]!;
    expect([c.stage, c.approvalAnswer, c.approval]).toEqual(['queued', 'allowed-once', undefined]);
    s.applyEvent(ev({ type: 'tool/progress', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write', output: 'ab', message: 'writing', progress: 1, total: 4, updates: 1 }));
    s.applyEvent(ev({ type: 'tool/progress', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write', output: 'x'.repeat(PROGRESS_OUTPUT_CHARS), progress: 2, updates: 2 }));
    const p = s.snapshot().turns[0]!.calls[0]!;
    expect(p.stage).toBe('executing');
    expect(p.progress).toStrictEqual({ message: 'writing', progress: 2, total: 4, output: 'x'.repeat(PROGRESS_OUTPUT_CHARS), events: 2 });
  });

  it('a suspended turn: its step suspended, the held calls settled; an event of its step resumes it; its end drops its open questions', () => {
    const s = new SessionState();
    s.applyEvent(ev({ type: 'turn/start', turnId: 't1', input: 'go' }));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(call('t1', 0, 'b', 1));
    s.applyEvent(call('t1', 0, 'c', 2));
    s.applyEvent(ev({ type: 'tool/result', turnId: 't1', stepIndex: 0, callId: 'c', toolName: 'write', sourceEventSeqs: [], result: ok('c') }));
    s.applyEvent(ev({ type: 'tool/approval-request', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write' }));
    s.applyEvent(ev({ type: 'turn/suspended', turnId: 't1', stepIndex: 0, held: [{ callId: 'b', callSeq: 1, result: ok('b') }, { callId: 'c', callSeq: 1, result: ok('c') }] }));
    const t = () => s.snapshot().turns[0]!;
    expect([t().state, t().steps[0]!.state, t().calls.map((c) => c.stage)]).toEqual(['suspended', 'suspended', ['awaitingApproval', 'settled', 'done']]);
    s.applyEvent(ev({ type: 'tool/approval-request', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write' }));
    expect(s.snapshot().approvals).toHaveLength(1);
    s.applyEvent(ev({ type: 'step/start', turnId: 't1', stepIndex: 0 }));
    expect(t().state).toBe('running');
    s.applyEvent(ev({ type: 'turn/end', turnId: 't1', outcome: 'cancelled', error: 'stopped' }));
    expect(s.snapshot().approvals).toStrictEqual([]);
    expect(t()).toMatchObject({ state: 'ended', outcome: 'cancelled', error: 'stopped', answer: '' });
  });
});
