/**
 * The session view's bookkeeping of the turns it started (src/view/sessionView.ts), against a
 * stand-in runtime whose turn handles the test settles: a turn whose actor fails, one dropped
 * while queued, a steer that came too late and became a turn, controls for a turn it does not hold.
 * (The real runtime's paths are test/view/sessionView.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import type { TurnHandle } from '../../src/runtime/turn/types.js';
import { createSessionView, type SessionViewRuntime } from '../../src/view/sessionView.js';

interface FakeTurn {
  handle: TurnHandle;
  finish(r: unknown): void;
  crash(e: unknown): void;
  steers: string[];
  cancels: (string | undefined)[];
}

function fakeTurn(turnId: string, steerAnswer?: () => Promise<unknown>, running = false): FakeTurn {
  let finish!: (r: unknown) => void;
  let crash!: (e: unknown) => void;
  const done = new Promise((resolve, reject) => ((finish = resolve), (crash = reject)));
  const steers: string[] = [];
  const cancels: (string | undefined)[] = [];
  const handle = {
    turnId,
    done,
    onDelta: () => () => {},
    lifecycle: { getSnapshot: () => ({ matches: (v: unknown) => running && JSON.stringify(v) === '{"live":"running"}' }), subscribe: () => ({ unsubscribe() {} }) },
    steer: (m: string) => (steers.push(m), steerAnswer ? steerAnswer() : Promise.resolve({ delivered: 'next-request' })),
    cancel: (reason?: string) => void cancels.push(reason),
  } as unknown as TurnHandle;
  return { handle, finish, crash, steers, cancels };
}

function fakeRuntime(turns: FakeTurn[]): SessionViewRuntime {
  let i = 0;
  const next = () => turns[i++]!.handle;
  return { log: { events: () => [], subscribe: () => () => {} }, startTurn: next, followUp: next, resumeTurn: next } as SessionViewRuntime;
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
