/**
 * One turn: `turn/start`, then steps until the model answers without tool calls, the step limit is
 * reached, a step fails or the caller cancels; then exactly one `turn/end` with the outcome.
 */
import { assign, sendTo, setup, spawnChild, stopChild } from 'xstate';
import type { TurnOutcome } from '../src/protocol/index.js';
import { stepMachine, type StepDeps, type StepOutput } from './step.js';

/** One turn: its services (`deps`), id, the user's input and its step limit. */
export interface TurnInput {
  readonly deps: StepDeps;
  readonly turnId: string;
  readonly input: string;
  /** At most this many model requests that open steps (SPEC §8.13). Default 16. */
  readonly maxSteps?: number;
  /**
   * Called when a step actor crashed (a bug or a throwing injected service): closes what the step
   * left open in the log (its unanswered calls, its `step/end`), so the turn still ends well-formed.
   */
  readonly closeCrashedStep?: (turnId: string, stepIndex: number, error: unknown) => void;
  /** Recorded on `turn/start`: the turn was queued by a follow-up (or is a late steering message). */
  readonly followUp?: { readonly kind: 'follow-up' | 'late-steer'; readonly after: string };
  /** A resumed turn (issue 15.4): its first step is this step index (the steps before it are in the log). */
  readonly resumeAt?: number;
}

/** How a turn ended: its outcome, how many steps it took, and the error of a failed turn. */
export interface TurnOutput {
  readonly turnId: string;
  readonly outcome: TurnOutcome;
  readonly steps: number;
  readonly error?: string;
}

/** The turn machine's context: its step count, whether it was cancelled, its outcome. */
export interface TurnContext {
  readonly deps: StepDeps;
  /** Closes what a crashed step left open (see `TurnInput.closeCrashedStep`). */
  readonly closeCrashedStep: TurnInput['closeCrashedStep'];
  readonly followUp: TurnInput['followUp'];
  readonly turnId: string;
  readonly input: string;
  readonly maxSteps: number;
  readonly stepIndex: number;
  readonly steps: number;
  readonly cancelled: boolean;
  readonly outcome: TurnOutcome | undefined;
  readonly error: string | undefined;
}

/** What the turn hears: start, cancel, and its step ending or failing. */
export type TurnEvent =
  | { type: 'START' }
  | { type: 'CANCEL'; reason?: string }
  | { type: 'xstate.done.actor.step'; output: StepOutput }
  | { type: 'xstate.error.actor.step'; error: unknown };

type StepDone = { output: StepOutput };

/** A turn: steps of model requests and tool calls until the model answers, the turn is cancelled, fails or reaches `maxSteps`. */
export const turnMachine = setup({
  types: {
    context: {} as TurnContext,
    input: {} as TurnInput,
    events: {} as TurnEvent,
    output: {} as TurnOutput,
  },
  actors: { step: stepMachine },
  guards: {
    // Stryker disable next-line LogicalOperator: the step is told every cancel of its turn (and starts cancelled after one), so its output is cancelled exactly when the turn is: either operand decides
    stepCancelled: ({ context, event }) => context.cancelled || (event as unknown as StepDone).output.cancelled,
    stepFailed: ({ event }) => (event as unknown as StepDone).output.error !== undefined,
    answered: ({ event }) => (event as unknown as StepDone).output.toolCalls === 0,
    outOfSteps: ({ context }) => context.stepIndex + 1 >= context.maxSteps,
    /**
     * The fallback after the four guards above (named for the diagram): the step was not cancelled and
     * did not fail, its tools ran and another request is allowed: the next step.
     */
    nextStep: () => true,
    cancelledBeforeStart: ({ context }) => context.cancelled,
    notCancelled: ({ context }) => !context.cancelled,
  },
}).createMachine({
  id: 'turn',
  context: ({ input }) => ({
    deps: input.deps,
    closeCrashedStep: input.closeCrashedStep,
    followUp: input.followUp,
    turnId: input.turnId,
    input: input.input,
    maxSteps: Math.max(1, input.maxSteps ?? 16),
    stepIndex: input.resumeAt ?? 0,
    steps: input.resumeAt ?? 0,
    cancelled: false,
    outcome: undefined,
    error: undefined,
  }),
  initial: 'idle',
  states: {
    /**
     * Waits for `START`. (Logging `turn/start` in the initial macrostep would land after the first
     * step's events: XState starts children created there before it runs deferred entry actions.)
     */
    idle: {
      on: {
        START: 'starting',
        CANCEL: { target: 'starting', actions: assign({ cancelled: true }) },
      },
    },
    starting: {
      entry: ({ context }) =>
        context.deps.log.append({ type: 'turn/start', turnId: context.turnId, input: context.input, ...(context.followUp ? { followUp: context.followUp } : {}) }),
      always: [
        { guard: 'cancelledBeforeStart', target: 'ending', actions: assign({ outcome: 'cancelled' }) },
        { guard: 'notCancelled', target: 'stepping' },
      ],
    },
    stepping: {
      entry: [
        assign({ steps: ({ context }) => context.steps + 1 }),
        spawnChild('step', {
          id: 'step',
          input: ({ context }) => ({ deps: context.deps, turnId: context.turnId, stepIndex: context.stepIndex, cancelled: context.cancelled }),
        }),
      ],
      exit: stopChild('step'),
      on: {
        'xstate.done.actor.step': [
          { guard: 'stepCancelled', target: 'ending', actions: assign({ outcome: 'cancelled' }) },
          { guard: 'stepFailed', target: 'ending', actions: assign({ outcome: 'failed', error: ({ event }) => event.output.error }) },
          { guard: 'answered', target: 'ending', actions: assign({ outcome: 'completed' }) },
          { guard: 'outOfSteps', target: 'ending', actions: assign({ outcome: 'max-steps' }) },
          { guard: 'nextStep', target: 'stepping', reenter: true, actions: assign({ stepIndex: ({ context }) => context.stepIndex + 1 }) },
        ],
        'xstate.error.actor.step': {
          target: 'ending',
          actions: [
            ({ context, event }) => context.closeCrashedStep?.(context.turnId, context.stepIndex, event.error),
            assign({ outcome: 'failed', error: ({ event }) => `step crashed: ${String(event.error)}` }),
          ],
        },
        CANCEL: { actions: [assign({ cancelled: true }), sendTo('step', ({ event }) => ({ type: 'CANCEL' as const, reason: event.reason }))] },
      },
    },
    ending: {
      entry: ({ context }) =>
        context.deps.log.append({
          type: 'turn/end',
          turnId: context.turnId,
          // Every transition into `ending` sets the outcome.
          outcome: context.outcome!,
          steps: context.steps,
          error: context.error,
        }),
      always: 'done',
    },
    done: { type: 'final' },
  },
  output: ({ context }) => ({ turnId: context.turnId, outcome: context.outcome!, steps: context.steps, error: context.error }),
});
