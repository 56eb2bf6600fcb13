/**
 * The cheapest actor-per-call shape XState allows, for reference in W1: a parent machine is sent
 * one event per call, spawns a trivial child for it (one state, waits for its promise, then final)
 * and stops the child when its done event arrives, at most `limit` children live. No validation,
 * no hooks, no log. Whatever dsh costs above this is the pipeline; this much is XState's floor for
 * any design with one actor per call.
 */
import { createActor, enqueueActions, setup, toPromise } from 'xstate';

const child = setup({ types: { input: {} as { i: number }, context: {} as { i: number }, events: {} as { type: 'DONE' } } }).createMachine({
  id: 'skeletonCall',
  context: ({ input }) => ({ i: input.i }),
  initial: 'running',
  states: {
    running: { entry: ({ self }) => void Promise.resolve().then(() => self.send({ type: 'DONE' })), on: { DONE: 'done' } },
    done: { type: 'final' },
  },
  output: ({ context }) => context.i,
});

type ParentEvent = { type: 'ADD'; i: number } | { type: `xstate.done.actor.${string}`; actorId: string; output: number };

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
        ADD: { actions: enqueueActions(({ event, enqueue }) => enqueue.spawnChild('child', { id: `c-${(event as { i: number }).i % 8}`, input: { i: (event as { i: number }).i } })) },
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
