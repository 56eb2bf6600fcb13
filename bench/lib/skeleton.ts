/**
 * The cheapest actor-per-call shape XState allows, for reference in W1 and W2: a parent machine is sent
 * one event per call, spawns a trivial child for it (one state, waits for its promise, then final)
 * and stops the child when its done event arrives, at most `limit` children live. No validation,
 * no hooks, no log. Whatever dsh costs above this is the pipeline; this much is XState's floor for
 * any design with one actor per call.
 */
import { createActor, enqueueActions, setup, toPromise } from 'xstate';

/** A call: waits for its "body" (a microtask, or a `sleepMs` timer), then final. */
const child = setup({ types: { input: {} as { i: number; sleepMs?: number }, context: {} as { i: number; sleepMs?: number }, events: {} as { type: 'DONE' } } }).createMachine({
  id: 'skeletonCall',
  context: ({ input }) => ({ i: input.i, sleepMs: input.sleepMs }),
  initial: 'running',
  states: {
    running: {
      entry: ({ context, self }) => {
        const done = () => self.send({ type: 'DONE' });
        if (context.sleepMs === undefined) void Promise.resolve().then(done);
        else setTimeout(done, context.sleepMs);
      },
      on: { DONE: 'done' },
    },
    done: { type: 'final' },
  },
  output: ({ context }) => context.i,
});

type ParentEvent = { type: 'ADD'; i: number; sleepMs?: number } | { type: `xstate.done.actor.${string}`; actorId: string; output: number };

const parent = setup({
  types: { input: {} as { n: number }, context: {} as { left: number }, events: {} as ParentEvent },
  actors: { child },
}).createMachine({
  id: 'skeleton',
  context: ({ input }) => ({ left: input.n }),
  initial: 'running',
  states: {
    running: {
      always: { guard: ({ context }) => context.left === 0, target: 'done' },
      on: {
        ADD: { actions: enqueueActions(({ event, enqueue }) => {
            const e = event as { i: number; sleepMs?: number };
            enqueue.spawnChild('child', { id: `c-${e.i % 16}`, input: { i: e.i, sleepMs: e.sleepMs } });
          }) },
        'xstate.done.actor.*': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            context.left--;
            enqueue.stopChild((event as { actorId: string }).actorId);
          }),
        },
      },
    },
    done: { type: 'final' },
  },
});

/** One batch of n calls, fed 8 at a time (each call's child settles before the next 8 arrive). */
export async function skeletonTurn(n: number): Promise<void> {
  const actor = createActor(parent, { input: { n } });
  const done = toPromise(actor);
  actor.start();
  for (let i = 0; i < n; i += 8) {
    for (let j = i; j < i + 8 && j < n; j++) actor.send({ type: 'ADD', i: j });
    await new Promise<void>((r) => setImmediate(r));
  }
  await done;
}

/**
 * W2's shape for the skeleton: n calls whose bodies sleep `sleepMs`, all live at once (n ≤ 16),
 * arriving one per microtask as from a model stream; resolves when every child is done. One batch,
 * no steps, no model, no log: the least wall time any one-actor-per-call design can take.
 */
export async function skeletonParallel(n: number, sleepMs: number): Promise<void> {
  if (n > 16) throw new RangeError('skeletonParallel: at most 16 calls (child ids are reused modulo 16)');
  const actor = createActor(parent, { input: { n } });
  const done = toPromise(actor);
  actor.start();
  for (let i = 0; i < n; i++) {
    await Promise.resolve();
    actor.send({ type: 'ADD', i, sleepMs });
  }
  await done;
}
