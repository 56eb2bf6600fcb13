/**
 * The life of one turn as a person waits on it (SPEC §9.3–§9.5): queued behind the turns asked for
 * before it, making room in the context, running, suspending on an approval that outlives the
 * process, suspended, cancelling, ended. The turn's own work (its steps, calls and `turn/start` …
 * `turn/end`) is the turn machine (`turn.ts`), started and told through the injected port; its
 * messages from the caller are the `steering` child (`steering.ts`).
 *
 * The states, by the names a view shows (stable; `state.matches(...)`):
 * - `queued`: waits for the turns before it (one turn at a time, in the order asked, §8.16/§9.3);
 *   a cancel here is remembered and applied when its turn comes (it then logs `turn/start` and
 *   `turn/end cancelled` without a model request);
 * - `preparing`: its turn came; room is made in the context first (a summariser may take a model
 *   request), only when the runtime has a context window;
 * - `live.running`: the turn machine runs;
 * - `live.suspending`: a call's approval answered `suspend`; the turn waits for its step to be
 *   quiet (the response complete, every other running call settled or parked);
 * - `live.cancelling`: cancelled; the turn closes what it opened (running calls settle `ABORTED`,
 *   others `ABORTED_BEFORE_DISPATCH`) and logs `turn/end cancelled`;
 * - `suspended`: `turn/suspended` is logged and the turn machine is stopped: nothing of the turn is
 *   left in memory but this record; any process holding the session may resume it from the log;
 * - `ended`: `turn/end` is logged (or the turn never began: the session was suspended when its turn
 *   came, `outcome` says so); `outcome` is its outcome.
 * A steer waiting for the next request is the `steering` child's `waiting` state.
 *
 * Why a machine of its own beside the turn machine rather than the turn machine grown: the turn
 * machine is the work (what the log records), this is the waiting around it, and they live apart.
 * A queued turn and a suspended turn have no running turn actor (a suspended one is stopped, so a
 * process can exit), but a person still sees them and can still steer them; and `handle.actor`
 * stays the turn machine the inspector, the CLI and UIs already watch. The queue's order (which
 * queued turn begins next) is the session's: it sends `BEGIN` to the head of the queue.
 *
 * Pure and browser-safe: running the turn actor (the invoked `turn`: started as `live` is entered,
 * stopped as it is left), making room and logging a suspension are the injected `TurnLifecyclePort`'s;
 * the lifecycle only decides when.
 */
import { assertEvent, assign, fromCallback, fromPromise, sendTo, setup } from 'xstate';
import type { LogEventOf, TurnOutcome } from '../src/protocol/index.js';
import { steeringMachine, type Steer, type SteeringPort } from './steering.js';

/** The quiet step a suspension records: what its `turn/suspended` says beyond the turn id. */
export type QuietStep = Omit<LogEventOf<'turn/suspended'>, 'type' | 'turnId' | 'seq' | 'time'>;

/** What the lifecycle does in the world. */
export interface TurnLifecyclePort {
  /** True when room is made in the context before a turn (the runtime has a context window). */
  readonly makesRoom: boolean;
  /** Makes room in the context before the turn (never rejects: a failure is logged as a warning). */
  makeRoom(): Promise<void>;
  /**
   * Starts the turn machine (with `cancel`, cancelled at once: `turn/start`, `turn/end cancelled`)
   * and reports how it ends (`TURN.ENDED`, `TURN.FAILED`) and what happens to its calls (`PARKED`,
   * `UNPARKED`, `QUIET`). Run as the lifecycle's invoked `turn` actor, outside any custom action.
   */
  run(cancel: { readonly reason?: string } | undefined, report: (event: TurnRunReport) => void): TurnRun;
  /** Logs `turn/suspended` for the quiet step (the turn machine is stopped as `live` is left). */
  suspend(quiet: QuietStep): void;
  readonly steering: SteeringPort;
}

/** A running turn machine, as its lifecycle drives it. */
export interface TurnRun {
  /** Cancels the running turn. */
  cancel(reason: string | undefined): void;
  /** Stops the turn machine (nothing of it lives on); a no-op once it has ended. */
  stop(): void;
}

/** What the running turn tells its lifecycle. */
export type TurnRunReport = Extract<TurnLifecycleEvent, { type: 'PARKED' | 'UNPARKED' | 'QUIET' | 'TURN.ENDED' | 'TURN.FAILED' }>;

/** One turn's lifecycle: the turn id and the port that runs it. */
export interface TurnLifecycleInput {
  readonly turnId: string;
  readonly port: TurnLifecyclePort;
}

/** How the turn ended, as the lifecycle knows it. */
export type LifecycleOutcome = TurnOutcome | 'dropped';

/** The lifecycle's context: a cancel that came early, the outcome, and the step a suspended turn waits on. */
export interface TurnLifecycleContext {
  readonly turnId: string;
  readonly port: TurnLifecyclePort;
  /** A cancel that came before the turn machine started (applied when it starts). */
  readonly cancel: { readonly reason?: string } | undefined;
  readonly outcome: LifecycleOutcome | undefined;
  /** Why it failed or was dropped. */
  readonly error: string | undefined;
  /** The step it suspended on. */
  readonly suspendedAt: number | undefined;
}

/** What the lifecycle hears: its turn may begin, cancel, the running turn parking, going quiet, ending or failing. */
export type TurnLifecycleEvent =
  /** Its turn came: the turns before it have ended. */
  | { type: 'BEGIN' }
  /** Its turn came while the session has a suspended turn: it does not begin. */
  | { type: 'DROP'; reason: string }
  | { type: 'CANCEL'; reason?: string }
  /** A message from the caller for the turn (see `steering.ts`). */
  | { type: 'STEER'; steer: Steer }
  /** A call of the turn parked on a `suspend` answer. */
  | { type: 'PARKED' }
  /** No parked call is left (each was answered otherwise, cancelled or timed out). */
  | { type: 'UNPARKED' }
  /** The step is quiet with calls parked: the turn can be suspended. */
  | { type: 'QUIET'; quiet: QuietStep }
  /** The turn machine finished (`turn/end` is logged). */
  | { type: 'TURN.ENDED'; outcome: TurnOutcome }
  /** The turn machine itself failed (a bug or a throwing service): no `turn/end`. */
  | { type: 'TURN.FAILED'; error: string };

/** A turn as a person waits on it: `queued`, `preparing`, `live` (running, suspending, cancelling), `suspended`, `ended`. */
export const turnLifecycleMachine = setup({
  types: {
    context: {} as TurnLifecycleContext,
    input: {} as TurnLifecycleInput,
    events: {} as TurnLifecycleEvent,
    /** Its children by id: the messages for the turn, room being made, the running turn. */
    children: {} as { steering: 'steering'; makeRoom: 'makeRoom'; turn: 'turn' },
  },
  actors: {
    steering: steeringMachine,
    makeRoom: fromPromise<void, { port: TurnLifecyclePort }>(({ input }) => input.port.makeRoom()),
    turn: fromCallback<{ type: 'CANCEL'; reason?: string }, { port: TurnLifecyclePort; cancel: TurnLifecycleContext['cancel'] }>(({ input, sendBack, receive }) => {
      const run = input.port.run(input.cancel, sendBack);
      receive((e) => run.cancel(e.reason));
      return () => run.stop();
    }),
  },
  guards: {
    makesRoom: ({ context }) => context.port.makesRoom,
    cancelRequested: ({ context }) => context.cancel !== undefined,
    /** The fallback after `cancelRequested` (named for the diagram): no cancel came while room was made. */
    notCancelled: () => true,
    /** The fallback after `makesRoom` and `cancelRequested` (named for the diagram): no room to make and no cancel: the turn runs at once. */
    runsAtOnce: () => true,
  },
  actions: {
    rememberCancel: assign({
      cancel: ({ context, event }) => {
        assertEvent(event, 'CANCEL');
        return context.cancel ?? { reason: event.reason };
      },
    }),
    cancelTurn: sendTo('turn', ({ event }) => {
      assertEvent(event, 'CANCEL');
      return { type: 'CANCEL' as const, reason: event.reason };
    }),
    suspendTurn: ({ context, event }) => {
      assertEvent(event, 'QUIET');
      context.port.suspend(event.quiet);
    },
    forwardSteer: sendTo('steering', ({ event }) => event),
    closeSteering: sendTo('steering', { type: 'CLOSED' }),
    suspendSteering: sendTo('steering', ({ context }) => ({ type: 'SUSPENDED' as const, stepIndex: context.suspendedAt! })),
  },
}).createMachine({
  id: 'turnLifecycle',
  context: ({ input }) => ({ turnId: input.turnId, port: input.port, cancel: undefined, outcome: undefined, error: undefined, suspendedAt: undefined }),
  invoke: { id: 'steering', src: 'steering', input: ({ context }) => ({ port: context.port.steering }) },
  on: { STEER: { actions: 'forwardSteer' } },
  initial: 'queued',
  states: {
    queued: {
      on: {
        BEGIN: [
          { guard: 'makesRoom', target: 'preparing' },
          { guard: 'cancelRequested', target: 'live.cancelling' },
          { guard: 'runsAtOnce', target: 'live.running' },
        ],
        DROP: { target: 'ended', actions: assign({ outcome: 'dropped', error: ({ event }) => event.reason }) },
        CANCEL: { actions: 'rememberCancel' },
      },
    },
    preparing: {
      invoke: {
        id: 'makeRoom',
        src: 'makeRoom',
        input: ({ context }) => ({ port: context.port }),
        onDone: [{ guard: 'cancelRequested', target: 'live.cancelling' }, { guard: 'notCancelled', target: 'live.running' }],
        // The port's makeRoom never rejects; were it to, the turn still runs.
        onError: [{ guard: 'cancelRequested', target: 'live.cancelling' }, { guard: 'notCancelled', target: 'live.running' }],
      },
      on: { CANCEL: { actions: 'rememberCancel' } },
    },
    live: {
      invoke: { id: 'turn', src: 'turn', input: ({ context }) => ({ port: context.port, cancel: context.cancel }) },
      initial: 'running',
      states: {
        running: {
          on: {
            CANCEL: { target: 'cancelling', actions: 'cancelTurn' },
            PARKED: 'suspending',
          },
        },
        suspending: {
          on: {
            QUIET: { target: '#turnLifecycle.suspended', actions: [assign({ suspendedAt: ({ event }) => event.quiet.stepIndex }), 'suspendTurn'] },
            UNPARKED: 'running',
            CANCEL: { target: 'cancelling', actions: 'cancelTurn' },
          },
        },
        cancelling: {},
      },
      on: {
        'TURN.ENDED': { target: 'ended', actions: assign({ outcome: ({ event }) => event.outcome }) },
        'TURN.FAILED': { target: 'ended', actions: assign({ outcome: 'failed', error: ({ event }) => event.error }) },
      },
    },
    suspended: {
      entry: 'suspendSteering',
    },
    ended: {
      entry: 'closeSteering',
    },
  },
});
