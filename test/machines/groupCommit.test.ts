// `changesAnything` (a sink skips the asks the group-commit machine would ignore) agrees with the
// machine itself in every state the machine can reach: a skipped ask is exactly one that would
// leave the state and the context as they are.
import { describe, expect, it } from 'vitest';
import { getInitialSnapshot, getNextSnapshot, type SnapshotFrom } from 'xstate';
import { changesAnything, groupCommitMachine, type GroupCommitPort } from '../../machines/groupCommit.js';

type Snap = SnapshotFrom<typeof groupCommitMachine>;
const port: GroupCommitPort = { commit: () => new Promise(() => undefined), committed: () => undefined, wait: () => () => undefined, failed: () => undefined };
const asks = ['COMMIT', 'SOON', 'LAZY'] as const;
const others = [{ type: 'DUE' }, { type: 'xstate.done.actor.commit', output: 3 }, { type: 'CLOSE' }] as const;
const key = (s: Snap) => JSON.stringify([s.value, s.status, s.context.due, s.context.next, s.context.closing]);

describe('group commit: the asks a sink may skip', () => {
  it('are exactly those that change neither state nor context, in every reachable state', () => {
    const seen = new Map<string, Snap>();
    const queue: Snap[] = [getInitialSnapshot(groupCommitMachine, { port })];
    while (queue.length > 0) {
      const s = queue.shift()!;
      if (seen.has(key(s))) continue;
      seen.set(key(s), s);
      for (const e of [...asks.map((type) => ({ type })), ...others]) queue.push(getNextSnapshot(groupCommitMachine, s, e as never));
    }
    expect(seen.size).toBeGreaterThanOrEqual(9);
    const wrong: string[] = [];
    for (const s of seen.values()) {
      for (const ask of asks) {
        const changes = key(getNextSnapshot(groupCommitMachine, s, { type: ask })) !== key(s);
        if (changesAnything(s, ask) !== changes) wrong.push(`${key(s)} ${ask}: says ${changesAnything(s, ask)}, the machine ${changes}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
