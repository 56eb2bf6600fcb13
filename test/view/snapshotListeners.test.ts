// What a UI subscribed to a session view hears (useSyncExternalStore's contract): once per burst
// of changes, never for a snapshot it already has, nothing after it unsubscribed; a listener that
// throws silences no other.
import { describe, expect, it } from 'vitest';
import { snapshotListeners } from '../../src/view/snapshotListeners.js';

const tick = () => new Promise<void>((r) => queueMicrotask(r));

describe('snapshotListeners', () => {
  it('tells each listener once per burst of changes, and only when the snapshot is a new object', async () => {
    let snap = { n: 0 };
    const l = snapshotListeners(() => snap);
    const heard: number[] = [];
    l.subscribe(() => heard.push(snap.n));
    snap = { n: 1 };
    l.changed();
    l.changed();
    l.changed();
    await tick();
    expect(heard).toEqual([1]);
    l.changed(); // nothing new: the same object
    await tick();
    expect(heard).toEqual([1]);
    snap = { n: 2 };
    l.changed();
    await tick();
    expect(heard).toEqual([1, 2]);
  });

  it('hears nothing after unsubscribing; a throwing listener silences no other; seen() makes the current snapshot old news', async () => {
    let snap = { n: 0 };
    const l = snapshotListeners(() => snap);
    const a: number[] = [];
    const b: number[] = [];
    l.subscribe(() => {
      throw new Error('a UI bug');
    });
    const offA = l.subscribe(() => a.push(snap.n));
    l.subscribe(() => b.push(snap.n));
    snap = { n: 1 };
    l.changed();
    await tick();
    expect([a, b]).toEqual([[1], [1]]);
    offA();
    snap = { n: 2 };
    l.changed();
    await tick();
    expect([a, b]).toEqual([[1], [1, 2]]);
    snap = { n: 3 };
    l.seen();
    l.changed();
    await tick();
    expect(b).toEqual([1, 2]);
    l.clear();
    snap = { n: 4 };
    l.changed();
    await tick();
    expect(b).toEqual([1, 2]);
  });
});
