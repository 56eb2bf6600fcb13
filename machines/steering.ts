/**
 * Steering one turn (SPEC §9.2): a message sent to a running turn waits for the turn's next model
 * request and enters that prompt (logged `user/steer`); a message the turn can no longer deliver is
 * never dropped: it becomes a follow-up turn of its own. A suspended turn (§9.4) goes on after its
 * resume, so a message for it belongs to the request that follows the suspended step, and is logged
 * at once for that request: the log carries it to whichever process resumes the session.
 *
 * The states, by the names a view shows (stable):
 * - `idle`: no message waits;
 * - `waiting`: messages wait for the turn's next model request (`REQUEST` delivers them all);
 * - `suspended`: the turn is suspended; every message is logged at once for the step after the
 *   suspended one;
 * - `closed`: the turn can make no more requests (it answered, ran out of steps, failed, was
 *   cancelled or never began); messages still waiting, and every later one, become a follow-up turn
 *   (`closed.followingUp` while it is made, then `closed.idle`).
 *
 * A child of `turnLifecycle`, its own actor on purpose: the turn's first request of a step is made
 * while the turn (and its lifecycle) are still processing the event that started the step, so only
 * an actor that is not busy then can hear `REQUEST` in time to log the messages before the prompt
 * is projected. Pure: logging and follow-up turns are the injected `SteeringPort`'s.
 */
import { assertEvent, assign, fromCallback, setup } from 'xstate';

/** One steering message; `id` is the caller's handle on it (what a delivery settles). */
export interface Steer {
  readonly id: number;
  readonly text: string;
}

/** What steering does in the world. */
export interface SteeringPort {
  /** Logs each message as `user/steer` for the model request of step `stepIndex`, in order. */
  deliver(steers: readonly Steer[], stepIndex: number): void;
  /** Makes one follow-up turn of these messages (queued like any turn). */
  followUp(steers: readonly Steer[]): void;
}

/** The port through which steering logs and delivers messages. */
export interface SteeringInput {
  readonly port: SteeringPort;
}

/** The steering machine's context: the steers waiting for the next model request. */
export interface SteeringContext {
  readonly port: SteeringPort;
  /** Messages waiting for the next request, in the order they were sent. */
  readonly steers: readonly Steer[];
  /** While suspended: the step whose request comes next (the one after the suspended step). */
  readonly nextStep: number | undefined;
}

/** What the steering machine hears: a steer, the next request about to be made, suspension and the end of the turn. */
export type SteeringEvent =
  | { type: 'STEER'; steer: Steer }
  /** The turn is about to make the model request of step `stepIndex` (its prompt is projected next). */
  | { type: 'REQUEST'; stepIndex: number }
  /** The turn suspended on step `stepIndex`; its next request is that of the step after it. */
  | { type: 'SUSPENDED'; stepIndex: number }
  /** The turn can make no more model requests. */
  | { type: 'CLOSED' }
  /** The messages held when the turn closed (or sent since) went to a follow-up turn. */
  | { type: 'FOLLOWED_UP' };

/** Holds a turn's steering messages until its next model request (`waiting`), and turns those it can no longer deliver into a follow-up. */
export const steeringMachine = setup({
  types: {
    context: {} as SteeringContext,
    input: {} as SteeringInput,
    events: {} as SteeringEvent,
  },
  actions: {
    hold: assign({
      steers: ({ context, event }) => {
        assertEvent(event, 'STEER');
        return [...context.steers, event.steer];
      },
    }),
    drop: assign({ steers: [] }),
    deliverHeld: ({ context, event }) => {
      assertEvent(event, 'REQUEST');
      context.port.deliver(context.steers, event.stepIndex);
    },
    noteNextStep: assign({
      nextStep: ({ event }) => {
        assertEvent(event, 'SUSPENDED');
        return event.stepIndex + 1;
      },
    }),
    // Entered from `waiting`, so messages are held.
    deliverHeldAfterSuspension: ({ context }) => context.port.deliver(context.steers, context.nextStep!),
    deliverNow: ({ context, event }) => {
      assertEvent(event, 'STEER');
      context.port.deliver([event.steer], context.nextStep!);
    },
    holdOnly: assign({
      steers: ({ event }) => {
        assertEvent(event, 'STEER');
        return [event.steer];
      },
    }),
  },
  actors: {
    // An invoked actor, not a custom action: a follow-up turn creates actors, which XState does not
    // expect inside an action.
    followUp: fromCallback<{ type: 'never' }, { port: SteeringPort; steers: readonly Steer[] }>(({ input, sendBack }) => {
      // Entered with messages held (from `waiting`, or a message to `closed.idle`).
      input.port.followUp(input.steers);
      sendBack({ type: 'FOLLOWED_UP' });
    }),
  },
}).createMachine({
  id: 'steering',
  context: ({ input }) => ({ port: input.port, steers: [], nextStep: undefined }),
  initial: 'idle',
  states: {
    idle: {
      on: {
        STEER: { target: 'waiting', actions: 'hold' },
        SUSPENDED: { target: 'suspended', actions: 'noteNextStep' },
        // Nothing waits: no follow-up to make.
        CLOSED: 'closed.idle',
      },
    },
    waiting: {
      on: {
        STEER: { actions: 'hold' },
        REQUEST: { target: 'idle', actions: ['deliverHeld', 'drop'] },
        SUSPENDED: { target: 'suspended', actions: ['noteNextStep', 'deliverHeldAfterSuspension', 'drop'] },
        CLOSED: 'closed.followingUp',
      },
    },
    suspended: {
      on: { STEER: { actions: 'deliverNow' } },
    },
    closed: {
      initial: 'idle',
      states: {
        followingUp: {
          invoke: { src: 'followUp', input: ({ context }) => ({ port: context.port, steers: context.steers }) },
          // Handed to the follow-up turn: no longer waiting.
          on: { FOLLOWED_UP: { target: 'idle', actions: 'drop' } },
        },
        idle: {
          on: { STEER: { target: 'followingUp', actions: 'holdOnly' } },
        },
      },
    },
  },
});
