/**
 * A small machine that uses every construct the diagram generator must draw: `always`, named and
 * numeric `after` delays, `invoke` with `onDone`/`onError`, named and higher-order guards, several
 * guarded targets for one event, a targetless transition, root-level transitions, nested compound,
 * parallel, history and final states, and a compound `onDone`.
 */
import { and, fromPromise, not, setup, stateIn } from 'xstate';

export const adHocMachine = setup({
  types: { events: {} as { type: 'GO' } | { type: 'RETRY' } | { type: 'PING' } | { type: 'RESET' } | { type: 'TICK' } },
  actors: { fetchUser: fromPromise(async () => 'user') },
  guards: { isReady: () => true, isAdmin: () => false, hasQuota: () => true },
  delays: { patience: 500 },
}).createMachine({
  id: 'adHoc',
  initial: 'idle',
  on: { RESET: '.idle' },
  states: {
    idle: {
      description: 'waits for GO\nor a PING',
      on: {
        GO: [
          { guard: 'isAdmin', target: 'loading' },
          { guard: not('isReady'), target: 'waiting' },
          { guard: and(['isReady', not('hasQuota')]), target: 'failed' },
          { target: 'loading' },
        ],
        PING: { actions: () => undefined },
      },
    },
    waiting: {
      after: { patience: 'idle', 1000: { guard: stateIn('idle'), target: 'failed' } },
      always: { guard: 'isReady', target: 'loading' },
    },
    loading: {
      invoke: {
        src: 'fetchUser',
        onDone: { target: 'working' },
        onError: [{ guard: 'hasQuota', target: 'waiting' }, { target: 'failed' }],
      },
    },
    working: {
      type: 'parallel',
      states: {
        upload: {
          initial: 'sending',
          states: {
            sending: { on: { TICK: 'sent' } },
            sent: { type: 'final' },
          },
        },
        ui: {
          initial: 'spinner',
          states: {
            spinner: { on: { TICK: 'bar' } },
            bar: {},
            memory: { type: 'history', history: 'deep' },
          },
        },
      },
      onDone: 'done',
    },
    failed: { on: { RETRY: { target: 'loading', reenter: true } } },
    done: { type: 'final' },
  },
});
