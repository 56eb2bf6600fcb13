/**
 * The session view's bookkeeping of the turns it started (src/view/sessionView.ts), against a
 * stand-in runtime whose turn handles the test settles: a turn whose actor fails, one dropped
 * while queued, a steer that came too late and became a turn, controls for a turn it does not hold.
 * (The real runtime's paths are test/view/sessionView.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/protocol/index.js';
import type { TurnDelta } from '../../src/runtime/turnDeltas.js';
import type { TurnHandle } from '../../src/runtime/turn/types.js';
import type { ApprovalInbox } from '../../src/view/approvalInbox.js';
import { createSessionView, type SessionViewRuntime } from '../../src/view/sessionView.js';

interface FakeTurn {
  handle: TurnHandle;
  finish(r: unknown): void;
  crash(e: unknown): void;
  steers: string[];
  cancels: (string | undefined)[];
  /** Streams a delta to the handle's `onDelta` listeners. */
  delta(d: TurnDelta): void;
}

function fakeTurn(turnId: string, steerAnswer?: () => Promise<unknown>, running = false): FakeTurn {
  let finish!: (r: unknown) => void;
  let crash!: (e: unknown) => void;
  const done = new Promise((resolve, reject) => ((finish = resolve), (crash = reject)));
  const steers: string[] = [];
  const cancels: (string | undefined)[] = [];
  const deltas = new Set<(d: TurnDelta) => void>();
  const handle = {
    turnId,
    done,
    onDelta: (l: (d: TurnDelta) => void) => (deltas.add(l), () => void deltas.delete(l)),
    lifecycle: { getSnapshot: () => ({ matches: (v: unknown) => running && JSON.stringify(v) === '{"live":"running"}' }), subscribe: () => ({ unsubscribe() {} }) },
    steer: (m: string) => (steers.push(m), steerAnswer ? steerAnswer() : Promise.resolve({ delivered: 'next-request' })),
    cancel: (reason?: string) => void cancels.push(reason),
  } as unknown as TurnHandle;
  return { handle, finish, crash, steers, cancels, delta: (d) => deltas.forEach((l) => l(d)) };
}

function fakeRuntime(turns: FakeTurn[]): SessionViewRuntime {
  let i = 0;
  const next = () => turns[i++]!.handle;
  return { log: { events: () => [], subscribe: () => () => {} }, startTurn: next, followUp: next, resumeTurn: next } as SessionViewRuntime;
}

/** A stand-in runtime with a log: `initial` events at first, `emit` appends one (and tells the view). */
function runtimeWithLog(turns: FakeTurn[], initial: ReadonlyArray<Record<string, unknown>> = []) {
  const events: LogEvent[] = [];
  const listeners = new Set<(e: LogEvent) => void>();
  const emit = (e: Record<string, unknown>) => {
    const event = { time: 0, ...e, seq: events.length + 1 } as unknown as LogEvent;
    events.push(event);
    for (const l of listeners) l(event);
  };
  for (const e of initial) emit(e);
  const log = { events: () => events.slice(), subscribe: (l: (e: LogEvent) => void) => (listeners.add(l), () => void listeners.delete(l)) };
  return { runtime: { ...fakeRuntime(turns), log } as SessionViewRuntime, emit };
}

const tick = () => new Promise((r) => setTimeout(r, 0));
const turnOf = (view: ReturnType<typeof createSessionView>, id: string) => view.getSnapshot().turns.find((t) => t.turnId === id);

describe('the turns a session view started', () => {
  it("a turn whose actor fails ends `failed`, saying why; the view lets go of its handle", async () => {
    const t = fakeTurn('t1');
    const view = createSessionView(fakeRuntime([t]));
    view.startTurn({ input: 'go' } as never);
    expect(turnOf(view, 't1')).toMatchObject({ state: 'queued', input: 'go' });
    expect(view.handle('t1')).toBe(t.handle);
    t.crash(new Error('the turn actor crashed'));
    await tick();
    expect(turnOf(view, 't1')).toMatchObject({ state: 'ended', outcome: 'failed', error: 'Error: the turn actor crashed' });
    expect(view.handle('t1')).toBeUndefined();
  });

  it('a turn dropped while queued (its run never began) ends `cancelled` with the reason; a suspended one stays as it was', async () => {
    const dropped = fakeTurn('t1');
    const suspended = fakeTurn('t2');
    const view = createSessionView(fakeRuntime([dropped, suspended]));
    view.startTurn({ input: 'one' } as never);
    view.followUp('two');
    dropped.finish({ outcome: 'cancelled', error: 'the session was closed' });
    suspended.finish({ outcome: 'suspended' });
    await tick();
    expect(turnOf(view, 't1')).toMatchObject({ state: 'ended', outcome: 'cancelled', error: 'the session was closed' });
    expect(turnOf(view, 't2')).toMatchObject({ state: 'queued', followUp: { kind: 'follow-up', after: 't1' } });
    expect(view.handle('t1')).toBeUndefined();
  });

  it('a steer that comes too late becomes a turn the view follows (a late steer after its turn)', async () => {
    const late = fakeTurn('t2');
    const t = fakeTurn('t1', async () => ({ delivered: 'follow-up', turn: late.handle }));
    const view = createSessionView(fakeRuntime([t]));
    view.startTurn({ input: 'go' } as never);
    const o = await view.steer('t1', 'also this');
    expect(o).toMatchObject({ delivered: 'follow-up' });
    expect(t.steers).toEqual(['also this']);
    expect(turnOf(view, 't2')).toMatchObject({ input: 'also this', state: 'queued', followUp: { kind: 'late-steer', after: 't1' } });
    expect(turnOf(view, 't1')!.steers).toEqual([{ text: 'also this', status: 'follow-up', turnId: 't2' }]);
    expect(view.handle('t2')).toBe(late.handle);
  });

  it('controls for a turn the view does not hold: steer rejects naming it, cancel is false; for a running one it holds, cancel shows `cancelling`', async () => {
    const t = fakeTurn('t1', undefined, true);
    const view = createSessionView(fakeRuntime([t]));
    await expect(view.steer('elsewhere', 'hi')).rejects.toThrow('steer: turn elsewhere is not running in this view');
    expect(view.cancel('elsewhere')).toBe(false);
    view.startTurn({ input: 'go' } as never);
    expect(turnOf(view, 't1')!.state).toBe('running');
    expect(view.cancel('t1', 'enough')).toBe(true);
    expect(t.cancels).toEqual(['enough']);
    expect(turnOf(view, 't1')!.state).toBe('cancelling');
  });

  it("the turn's lifecycle machine drives what a person waits on: running, suspending, cancelling; the view hears it live", async () => {
    let live: string | undefined;
    let next: (() => void) | undefined;
    const t = fakeTurn('t1');
    (t.handle as { lifecycle: unknown }).lifecycle = {
      getSnapshot: () => ({ matches: (v: { live?: string }) => live !== undefined && v.live === live }),
      subscribe: (o: { next: () => void }) => ((next = o.next), { unsubscribe: () => (next = undefined) }),
    };
    const view = createSessionView(fakeRuntime([t]));
    let heard = 0;
    view.subscribe(() => heard++);
    view.startTurn({ input: 'go' } as never);
    expect(turnOf(view, 't1')!.state).toBe('queued');
    for (const [state, shown] of [['running', 'running'], ['suspending', 'suspending'], ['cancelling', 'cancelling'], ['winding-down', 'cancelling']] as const) {
      live = state;
      next!();
      expect(turnOf(view, 't1')!.state, state).toBe(shown);
    }
    await tick();
    expect(heard).toBe(1);
    t.finish({ outcome: 'cancelled' });
    await tick();
    expect(next).toBeUndefined();
  });
});

describe('the session view, at its edges', () => {
  it('a session that already is a view (one served over the wire) is given back as it is', () => {
    const remote = { subscribe: () => () => {}, getSnapshot: () => createSessionView(fakeRuntime([])).getSnapshot(), approve: () => false, deny: () => false, suspend: () => false };
    expect(createSessionView(remote)).toBe(remote);
  });

  it('a follow-up asked for before any turn follows nothing: it has no `followUp`', () => {
    const view = createSessionView(fakeRuntime([fakeTurn('t1')]));
    view.followUp('first of all');
    expect(turnOf(view, 't1')).toStrictEqual({ turnId: 't1', input: 'first of all', state: 'queued', steps: [], calls: [], steers: [] });
  });

  it('a resumed turn the view has not seen yet shows running, its input unknown (empty) until its log says more', () => {
    const view = createSessionView(fakeRuntime([fakeTurn('t1')]));
    view.resume({} as never);
    expect(turnOf(view, 't1')).toMatchObject({ turnId: 't1', input: '', state: 'running' });
  });

  it('how a started turn ended comes from the log: a handle that settles first changes nothing, a turn dropped while queued ends `cancelled`', async () => {
    const running = fakeTurn('t1', undefined, true);
    const queued = fakeTurn('t2');
    const { runtime, emit } = runtimeWithLog([running, queued]);
    const view = createSessionView(runtime);
    view.startTurn({ input: 'one' } as never);
    view.startTurn({ input: 'two' } as never);
    emit({ type: 'turn/start', turnId: 't1', input: 'one' });
    queued.finish({ outcome: 'cancelled', error: 'dropped' });
    running.finish({ outcome: 'completed' });
    await tick();
    expect(turnOf(view, 't1')!.state).toBe('running');
    expect(turnOf(view, 't2')).toMatchObject({ state: 'ended', outcome: 'cancelled', error: 'dropped' });
    emit({ type: 'turn/end', turnId: 't1', outcome: 'completed', steps: 0 });
    expect(turnOf(view, 't1')).toMatchObject({ state: 'ended', outcome: 'completed' });
  });

  it('a handle the view replaced (the turn resumed under a new one) settling late lets go of nothing and ends nothing', async () => {
    for (const settle of ['finish', 'crash'] as const) {
      const first = fakeTurn('t1');
      const resumed = fakeTurn('t1', undefined, true);
      const view = createSessionView(fakeRuntime([first, resumed]));
      view.startTurn({ input: 'go' } as never);
      view.resume({} as never);
      if (settle === 'finish') first.finish({ outcome: 'suspended' });
      else first.crash(new Error('the old actor failed'));
      await tick();
      expect(view.handle('t1'), settle).toBe(resumed.handle);
      expect(turnOf(view, 't1')!.state, settle).toBe('running');
    }
  });

  it('several steers that came too late make one follow-up turn: the view follows it once (its text streams once)', async () => {
    const late = fakeTurn('t2');
    const t = fakeTurn('t1', async () => ({ delivered: 'follow-up', turn: late.handle }));
    const view = createSessionView(fakeRuntime([t]));
    view.startTurn({ input: 'go' } as never);
    await view.steer('t1', 'also this');
    await view.steer('t1', 'and that');
    late.delta({ type: 'text-delta', stepIndex: 0, delta: 'on it' });
    expect(turnOf(view, 't1')!.steers).toEqual([
      { text: 'also this', status: 'follow-up', turnId: 't2' },
      { text: 'and that', status: 'follow-up', turnId: 't2' },
    ]);
    expect(turnOf(view, 't2')).toMatchObject({ input: 'also this', followUp: { kind: 'late-steer', after: 't1' } });
    expect(turnOf(view, 't2')!.steps.map((s) => s.text)).toEqual(['on it']);
  });

  it('answers go to the inbox as the page gave them (a deny without a reason has none); without an inbox nobody waits, and every answer is false', () => {
    const asked = [
      { type: 'turn/start', turnId: 't1', input: 'go' },
      { type: 'tool/call', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write', input: '{}', index: 0, executionMode: 'exclusive' },
      { type: 'tool/approval-request', turnId: 't1', stepIndex: 0, callId: 'a', toolName: 'write' },
    ];
    const none = createSessionView(runtimeWithLog([], asked).runtime);
    expect(none.getSnapshot().approvals.map((a) => [a.id, a.answerable])).toEqual([['t1/0/a', false]]);
    expect([none.approve('t1/0/a'), none.deny('t1/0/a', 'no'), none.suspend('t1/0/a')]).toEqual([false, false, false]);

    const replies: unknown[] = [];
    const inbox = {
      questions: () => [{ callId: 'a', toolName: 'write', args: {} }],
      subscribe: () => () => {},
      answer: (callId: string, reply: unknown) => (replies.push([callId, reply]), true),
      request: () => new Promise(() => {}),
    } as unknown as ApprovalInbox;
    const view = createSessionView(runtimeWithLog([], asked).runtime, { approvals: inbox });
    expect(view.getSnapshot().approvals[0]!.answerable).toBe(true);
    expect([view.approve('t1/0/a'), view.approve('t1/0/a', 'always'), view.deny('t1/0/a'), view.deny('t1/0/a', 'not now'), view.suspend('t1/0/a')]).toEqual([true, true, true, true, true]);
    expect(replies).toStrictEqual([
      ['a', { kind: 'allow-once' }],
      ['a', { kind: 'allow-always' }],
      ['a', { kind: 'deny' }],
      ['a', { kind: 'deny', reason: 'not now' }],
      ['a', { kind: 'suspend' }],
    ]);
  });
});
