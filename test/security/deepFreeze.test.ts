/**
 * What listeners and bodies see is frozen all the way down (`deepFreeze`, src/runtime/args.ts):
 * pins what the cheaper walk must keep doing.
 */
import { runInNewContext } from 'node:vm';
import { castDraft, immerable, produce } from 'immer';
import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../src/runtime/args.js';

describe('deepFreeze', () => {
  it('freezes everything reachable: objects, arrays, Map and Set entries, inside an already frozen shell', () => {
    const inner = { n: 1 };
    const key = { k: true };
    const inSet = [1, { deep: { deeper: [] as unknown[] } }];
    const value = Object.freeze({ list: [inner, { a: { b: {} } }], map: new Map<object, object>([[key, { v: 1 }]]), set: new Set([inSet]) });
    expect(deepFreeze(value)).toBe(value);
    for (const o of [value.list, inner, value.list[1], (value.list[1] as { a: object }).a, key, value.map.get(key), inSet, inSet[1], (inSet[1] as { deep: object }).deep]) {
      expect(Object.isFrozen(o)).toBe(true);
    }
    expect(() => value.map.set({}, {})).toThrow();
    expect(() => value.map.delete(key)).toThrow();
    expect(() => value.set.add([])).toThrow();
    expect(() => value.set.clear()).toThrow();
    expect(value.map.size).toBe(1);
    expect(value.set.size).toBe(1);
  });

  it('ends on cycles (a value that holds itself, two that hold each other)', () => {
    const a: Record<string, unknown> = { name: 'a' };
    const b: Record<string, unknown> = { name: 'b', a };
    a.self = a;
    a.b = b;
    const m = new Map<string, unknown>();
    m.set('m', m);
    a.m = m;
    deepFreeze(a);
    expect([a, b, m].every((o) => Object.isFrozen(o))).toBe(true);
  });

  it('reads no getter (a hostile accessor is neither called nor walked) and leaves class instances alone', () => {
    let reads = 0;
    const hidden = { x: 1 };
    const o = Object.defineProperty({ plain: { y: 2 } }, 'trap', {
      enumerable: true,
      get() {
        reads++;
        return hidden;
      },
    });
    class Box {
      inside = { z: 3 };
    }
    const box = new Box();
    deepFreeze({ o, box, date: new Date(0) });
    expect(reads).toBe(0);
    expect(Object.isFrozen(o)).toBe(true);
    expect(Object.isFrozen(o.plain)).toBe(true);
    expect(Object.isFrozen(hidden)).toBe(false);
    expect(Object.isFrozen(box)).toBe(false);
    expect(Object.isFrozen(box.inside)).toBe(false);
  });

  it('freezes what immer would (a plain object from another realm, a class marked [immerable]) and leaves bytes, dates and other instances alone', () => {
    const foreign = runInNewContext('({ inner: { n: 1 }, list: [1] })') as { inner: object; list: unknown[] };
    class Marked {
      [immerable] = true;
      inside = { z: 3 };
    }
    const marked = new Marked();
    const bytes = new Uint8Array([1, 2, 3]);
    const date = new Date(0);
    const held = { foreign, marked, bytes, date };
    // Object.freeze would throw on a non-empty typed array: it is not walked into.
    expect(() => deepFreeze(held)).not.toThrow();
    expect([held, foreign, foreign.inner, foreign.list, marked, marked.inside].every((o) => Object.isFrozen(o))).toBe(true);
    expect(Object.isFrozen(bytes)).toBe(false);
    expect(Object.isFrozen(date)).toBe(false);
    bytes[0] = 9;
    expect(bytes[0]).toBe(9);
  });

  it('returns primitives as they are, and leaves an immer draft unfrozen (as immer does) while it lasts', () => {
    for (const v of [undefined, null, 0, 'text', true, 10n, Symbol.for('s')]) expect(deepFreeze(v)).toBe(v);
    const next = produce({ list: [{ n: 1 }] }, (draft) => {
      deepFreeze(draft);
      expect(Object.isFrozen(draft)).toBe(false);
      castDraft(draft).list.push({ n: 2 });
    });
    expect(next.list).toHaveLength(2);
  });
});
