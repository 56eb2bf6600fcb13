/**
 * `SessionState` (src/view/sessionState.ts): the rules of the projection a page renders that
 * test/view/sessionState.test.ts leaves open, each expected value read from the view's documented
 * contract (src/view/viewTypes.ts, docs/web.md, SPEC §9): what the snapshot holds and leaves out,
 * which turn is active, how a call's stage moves (and that `done` is final), how approvals and
 * progress read, and which events are a turn's at all.
 */
import { describe, expect, it } from 'vitest';
import type { CallStageEvent } from '../../src/runtime/inspection/index.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { SessionState } from '../../src/view/sessionState.js';

let seq = 0;
const ev = (e: Record<string, unknown>) => ({ time: 0, ...e, seq: ++seq }) as unknown as LogEvent;
const start = (turnId: string, input = 'go') => ev({ type: 'turn/start', turnId, input });
const call = (turnId: string, stepIndex: number, callId: string, index: number, input: unknown = '{"path":"a.txt"}') =>
  ev({ type: 'tool/call', turnId, stepIndex, callId, toolName: 'write', input, index, executionMode: 'exclusive' });
const ok = (callId: string) => ({ callId, toolName: 'write', isError: false, content: 'done', metadata: {} });
const result = (turnId: string, stepIndex: number, callId: string) => ev({ type: 'tool/result', turnId, stepIndex, callId, toolName: 'write', sourceEventSeqs: [1], result: ok(callId) });
const ask = (turnId: string, stepIndex: number, callId: string, extra: Record<string, unknown> = {}) => ev({ type: 'tool/approval-request', turnId, stepIndex, callId, toolName: 'write', ...extra });
const answer = (turnId: string, stepIndex: number, callId: string) => ev({ type: 'tool/approval-answer', turnId, stepIndex, callId, answer: 'allowed-once' });
const stage = (type: 'stage/entered' | 'stage/exited', s: string, callId: string) => ({ type, stage: s, callId, toolName: 'write', time: 0, turnId: 't1', stepIndex: 0 }) as unknown as CallStageEvent;

describe('the snapshot', () => {
  it('of a new session holds no turn, no question and no active or suspended turn (the keys are absent, not undefined)', () => {
    expect(new SessionState().snapshot()).toStrictEqual({ turns: [], approvals: [], lastSeq: 0 });
  });

  it('names the active turn while it runs, suspends (waiting for its step to be quiet) or cancels', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    for (const state of ['running', 'suspending', 'cancelling'] as const) {
      s.setTurnState('t1', state);
      expect(s.snapshot().turns[0]!.state).toBe(state);
      expect(s.snapshot().activeTurnId, state).toBe('t1');
    }
    s.applyEvent(ev({ type: 'turn/end', turnId: 't1', outcome: 'cancelled', steps: 0 }));
    expect(Object.keys(s.snapshot())).toEqual(['turns', 'approvals', 'lastSeq']);
  });

  it('a turn ended before any step answered nothing: its answer is empty', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    s.applyEvent(ev({ type: 'turn/end', turnId: 't1', outcome: 'cancelled', steps: 0 }));
    expect(s.snapshot().turns[0]).toStrictEqual({ turnId: 't1', input: 'go', state: 'ended', outcome: 'cancelled', answer: '', steps: [], calls: [], steers: [] });
  });

  it('a page that ends a turn without an error gives it no `error` key', () => {
    const s = new SessionState();
    s.queueTurn('t1', 'go');
    s.setTurnState('t1', 'ended', { outcome: 'cancelled' });
    expect(s.snapshot().turns[0]).toStrictEqual({ turnId: 't1', input: 'go', state: 'ended', outcome: 'cancelled', steps: [], calls: [], steers: [] });
  });
});

describe('turns, steps and text', () => {
  it('a steer to a turn the view does not know is at no position (-1)', () => {
    const s = new SessionState();
    expect(s.steerSent('nobody', 'hi')).toBe(-1);
    expect(s.snapshot().turns).toEqual([]);
  });

  it('steers of the same text: each `user/steer` delivers the oldest one still waiting', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    expect(s.steerSent('t1', 'again')).toBe(0);
    s.applyEvent(ev({ type: 'user/steer', turnId: 't1', stepIndex: 1, text: 'again' }));
    expect(s.steerSent('t1', 'again')).toBe(1);
    s.applyEvent(ev({ type: 'user/steer', turnId: 't1', stepIndex: 2, text: 'again' }));
    expect(s.snapshot().turns[0]!.steers).toStrictEqual([
      { text: 'again', status: 'delivered', stepIndex: 1 },
      { text: 'again', status: 'delivered', stepIndex: 2 },
    ]);
  });

  it('a delta of a turn the view does not know is dropped: it does not show once the turn appears', () => {
    const s = new SessionState();
    s.applyDelta('t2', { type: 'text-delta', stepIndex: 0, delta: 'streamed before the view knew the turn' });
    s.applyEvent(start('t2'));
    s.applyEvent(ev({ type: 'step/start', turnId: 't2', stepIndex: 0 }));
    s.applyEvent(ev({ type: 'llm/stream', turnId: 't2', stepIndex: 0, kind: 'text', text: 'ok' }));
    expect(s.snapshot().turns[0]!.steps[0]!.text).toBe('ok');
  });

  it('the log wins as soon as it has as much text as streamed (reasoning too, from the log alone)', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    s.applyDelta('t1', { type: 'text-delta', stepIndex: 0, delta: 'abc' });
    s.applyEvent(ev({ type: 'llm/stream', turnId: 't1', stepIndex: 0, kind: 'text', text: 'xyz' }));
    s.applyEvent(ev({ type: 'llm/stream', turnId: 't1', stepIndex: 0, kind: 'reasoning', text: 'think' }));
    expect(s.snapshot().turns[0]!.steps[0]).toMatchObject({ text: 'xyz', reasoning: 'think' });
    s.applyEvent(ev({ type: 'step/end', turnId: 't1', stepIndex: 0, finishReason: 'stop' }));
    expect(s.snapshot().turns[0]!.steps[0]).toMatchObject({ state: 'ended', text: 'xyz', reasoning: 'think' });
  });

  it('a suspended step runs again when the resumed turn starts it again', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(ask('t1', 0, 'a'));
    s.applyEvent(ev({ type: 'turn/suspended', turnId: 't1', stepIndex: 0, finishReason: 'tool-calls', calls: [{ callId: 'a', callSeq: 1 }], held: [] }));
    expect(s.snapshot().turns[0]!.steps[0]!.state).toBe('suspended');
    s.applyEvent(ev({ type: 'step/start', turnId: 't1', stepIndex: 0 }));
    expect([s.snapshot().turns[0]!.state, s.snapshot().turns[0]!.steps[0]!.state]).toEqual(['running', 'running']);
  });

  it('a cancelling turn stays `cancelling` while its step winds down (results, the step’s end), until its `turn/end`', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.setTurnState('t1', 'cancelling');
    s.applyEvent(result('t1', 0, 'a'));
    s.applyEvent(ev({ type: 'step/end', turnId: 't1', stepIndex: 0, finishReason: 'tool-calls' }));
    expect(s.snapshot().turns[0]!.state).toBe('cancelling');
    expect(s.snapshot().activeTurnId).toBe('t1');
  });

  it('a call whose `turn/start` the view never saw (a log read from its middle) shows in a running turn of unknown input, in a running step', () => {
    const s = new SessionState();
    s.applyEvent(call('t7', 1, 'a', 0));
    const t = s.snapshot().turns[0]!;
    expect([t.turnId, t.input, t.state, t.steers]).toEqual(['t7', '', 'running', []]);
    expect(t.steps.map((x) => [x.stepIndex, x.state, x.calls.map((c) => c.callId)])).toEqual([[1, 'running', ['a']]]);
    expect(t.calls.map((c) => c.key)).toEqual(['t7/1/a']);
    expect(s.snapshot().activeTurnId).toBe('t7');
  });
});

describe('calls', () => {
  it('arguments sent as a value (not JSON text) are the call’s `args` as they are', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    s.applyEvent(call('t1', 0, 'a', 0, { path: 'a.txt', lines: [1, 2] }));
    const c = s.snapshot().turns[0]!.calls[0]!;
    expect(c.args).toEqual({ path: 'a.txt', lines: [1, 2] });
    expect(c.input).toEqual({ path: 'a.txt', lines: [1, 2] });
    expect(Object.isFrozen(c.args)).toBe(true);
  });

  it('two calls at the same position in a batch keep the order the log gave them', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    s.applyEvent(call('t1', 0, 'first', 0));
    s.applyEvent(call('t1', 0, 'second', 0));
    expect(s.snapshot().turns[0]!.calls.map((c) => c.callId)).toEqual(['first', 'second']);
  });

  it('the stages of several calls that are not logged yet are each kept until its call is', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    s.applyStage(stage('stage/entered', 'validating', 'a'));
    s.applyStage(stage('stage/entered', 'validating', 'b'));
    s.applyStage(stage('stage/exited', 'validating', 'b'));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(call('t1', 0, 'b', 1));
    s.applyEvent(call('t1', 0, 'c', 2));
    expect(s.snapshot().turns[0]!.calls.map((c) => [c.callId, c.stage])).toEqual([['a', 'validating'], ['b', 'queued'], ['c', 'queued']]);
  });

  it('a call that leaves validation after it was logged is `queued` until it runs', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    s.applyStage(stage('stage/entered', 'validating', 'a'));
    s.applyEvent(call('t1', 0, 'a', 0));
    expect(s.snapshot().turns[0]!.calls[0]!.stage).toBe('validating');
    s.applyStage(stage('stage/exited', 'validating', 'a'));
    expect(s.snapshot().turns[0]!.calls[0]!.stage).toBe('queued');
  });

  it('`done` is final: an approval request, an answer or progress logged after the result does not move the call', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(result('t1', 0, 'a'));
    s.applyEvent(ev({ type: 'tool/progress', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write', message: 'late' }));
    expect(s.snapshot().turns[0]!.calls[0]!.stage).toBe('done');
    s.applyEvent(ask('t1', 0, 'a'));
    expect(s.snapshot().turns[0]!.calls[0]!.stage).toBe('done');
    s.applyEvent(answer('t1', 0, 'a'));
    expect(s.snapshot().turns[0]!.calls[0]!.stage).toBe('done');
  });

  it('progress: each field is the latest reported, a field an event leaves out keeps its value, output absent is no output', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    s.applyEvent(call('t1', 0, 'a', 0));
    const progress = (e: Record<string, unknown>) => ev({ type: 'tool/progress', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write', ...e });
    const now = () => s.snapshot().turns[0]!.calls[0]!.progress;
    s.applyEvent(progress({ progress: 1 }));
    expect(now()).toStrictEqual({ progress: 1, output: '', events: 1 });
    s.applyEvent(progress({ message: 'half way' }));
    expect(now()).toStrictEqual({ message: 'half way', progress: 1, output: '', events: 2 });
    s.applyEvent(progress({ output: 'ab', total: 4 }));
    s.applyEvent(progress({ output: 'c' }));
    expect(now()).toStrictEqual({ message: 'half way', progress: 1, total: 4, output: 'abc', events: 4 });
  });
});

describe('approvals', () => {
  it('a question is not answerable unless the page says so; without a reason or a preview it has neither key', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(ask('t1', 0, 'a'));
    const asked = s.snapshot().approvals[0]!;
    expect(asked).toStrictEqual({ id: 't1/0/a', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write', args: { path: 'a.txt' }, answerable: false, seq });
    expect(s.snapshot().turns[0]!.calls[0]!.approval).toBe(asked);
  });

  it('a question the page can answer at once is answerable at once, with its preview (frozen)', () => {
    const s = new SessionState((a) => a.callId === 'a');
    s.applyEvent(start('t1'));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(ask('t1', 0, 'a', { reason: 'a change', preview: { kind: 'diff', text: '+hello' } }));
    const asked = s.snapshot().approvals[0]!;
    expect(asked).toMatchObject({ answerable: true, reason: 'a change', preview: { kind: 'diff', text: '+hello' } });
    expect(Object.isFrozen(asked.preview)).toBe(true);
  });

  it('several open questions: asked again goes last (the newest), answerable changes touch only the one that changed, an answer removes only its own', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    for (const [id, i] of [['a', 0], ['b', 1], ['c', 2]] as const) s.applyEvent(call('t1', 0, id, i));
    for (const id of ['a', 'b', 'c']) s.applyEvent(ask('t1', 0, id));
    s.applyEvent(ask('t1', 0, 'a'));
    expect(s.snapshot().approvals.map((a) => a.callId)).toEqual(['b', 'c', 'a']);
    s.setAnswerable((a) => a.callId === 'c');
    expect(s.snapshot().approvals.map((a) => [a.callId, a.answerable])).toEqual([['b', false], ['c', true], ['a', false]]);
    expect(s.snapshot().turns[0]!.calls.map((c) => [c.callId, c.approval?.answerable])).toEqual([['a', false], ['b', false], ['c', true]]);
    s.applyEvent(answer('t1', 0, 'c'));
    expect(s.snapshot().approvals.map((a) => a.callId)).toEqual(['b', 'a']);
    s.applyEvent(result('t1', 0, 'a'));
    expect(s.snapshot().approvals.map((a) => a.callId)).toEqual(['b']);
  });

  it('an answered call holds no `approval` key (absent, not undefined), and its answer', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(ask('t1', 0, 'a'));
    s.applyEvent(answer('t1', 0, 'a'));
    expect(s.snapshot().turns[0]!.calls[0]).toStrictEqual({
      key: 't1/0/a',
      turnId: 't1',
      stepIndex: 0,
      callId: 'a',
      index: 0,
      toolName: 'write',
      input: '{"path":"a.txt"}',
      args: { path: 'a.txt' },
      executionMode: 'exclusive',
      stage: 'queued',
      approvalAnswer: 'allowed-once',
    });
  });

  it('a turn’s end drops its own questions only: the suspended turn’s question stays', () => {
    const s = new SessionState();
    s.applyEvent(start('t1'));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(ask('t1', 0, 'a'));
    s.applyEvent(ev({ type: 'turn/suspended', turnId: 't1', stepIndex: 0, finishReason: 'tool-calls', calls: [{ callId: 'a', callSeq: 1 }], held: [] }));
    s.applyEvent(start('t2'));
    s.applyEvent(call('t2', 0, 'b', 0));
    s.applyEvent(ask('t2', 0, 'b'));
    s.applyEvent(ev({ type: 'turn/end', turnId: 't2', outcome: 'cancelled', steps: 1 }));
    expect(s.snapshot().approvals.map((a) => a.id)).toEqual(['t1/0/a']);
    expect(s.snapshot().suspendedTurnId).toBe('t1');
  });
});

describe('events that are not a turn’s', () => {
  it('an event that names a turn but no step, or a step but no turn, is a lone call’s: no turn, step, call or question changes', () => {
    const s = new SessionState(() => true);
    s.applyEvent(start('t1'));
    s.applyEvent(call('t1', 0, 'a', 0));
    s.applyEvent(ask('t1', 0, 'a'));
    s.applyEvent(ev({ type: 'turn/suspended', turnId: 't1', stepIndex: 0, finishReason: 'tool-calls', calls: [{ callId: 'a', callSeq: 1 }], held: [] }));
    const before = s.snapshot();
    for (const where of [{ turnId: 't1' }, { stepIndex: 0 }]) {
      const at = { ...where, callId: 'a', toolName: 'write' };
      s.applyStage({ type: 'stage/entered', stage: 'executing', time: 0, ...at } as unknown as CallStageEvent);
      s.applyEvent(ev({ type: 'tool/call', ...at, callId: 'x', input: '{}', index: 1, executionMode: 'exclusive' }));
      s.applyEvent(ev({ type: 'tool/approval-request', ...at }));
      s.applyEvent(ev({ type: 'tool/progress', ...at, output: 'lone' }));
      s.applyEvent(ev({ type: 'tool/approval-answer', ...at, answer: 'allowed-once' }));
      s.applyEvent(ev({ type: 'tool/result', ...at, sourceEventSeqs: [1], result: ok('a') }));
    }
    const after = s.snapshot();
    expect(after.turns).toBe(before.turns);
    expect(after.approvals).toBe(before.approvals);
    expect(after.suspendedTurnId).toBe('t1');
  });
});
