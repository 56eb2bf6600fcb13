/**
 * The public shapes of running turns: a turn's options, its handle, its result, what a steer
 * became, and what the turn runner is wired from.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { ActorRefFrom } from 'xstate';
import type { CallStages } from '../../../machines/callStages.js';
import type { ModelCallOptions } from '../../../machines/modelCallOptions.js';
import type { TurnOutput, turnMachine } from '../../../machines/turn.js';
import type { turnLifecycleMachine } from '../../../machines/turnLifecycle.js';
import type { ArgLimits } from '../args.js';
import type { Clock } from '../clock.js';
import type { AnyTool } from '../defineTool.js';
import type { SessionLog } from '../log/sessionLog.js';
import type { ContextWindow } from '../context/fitContext.js';
import type { TurnAnswer } from '../projection/turnAnswer.js';
import type { RequestRetryPolicy } from '../requestErrors.js';
import type { InspectOption } from '../inspection/inspectionEvents.js';
import type { StageListener } from '../inspection/stageEvents.js';
import type { StageStream } from '../inspection/stageStream.js';
import type { TurnDelta } from '../turnDeltas.js';
import type { PendingSuspension } from '../resume/pendingSuspension.js';
import type { ResumedStep } from '../resume/resumedStep.js';
import type { createSuspensionRequests } from '../resume/suspendTurn.js';
import type { LogEventOf, TurnOutcome } from '../../protocol/index.js';

/** A turn's options: the model, the user's input, and how the turn runs (system prompt, step limit, signal, inspection, request settings). */
export interface TurnOptions {
  /** Any AI SDK `LanguageModelV3` provider, or `scriptedModel(...)`. */
  model: LanguageModelV3;
  /** The user's request that opens the turn. */
  input: string;
  system?: string;
  /** At most this many model requests that open steps (default 16). */
  maxSteps?: number;
  /** Aborting it cancels the turn (same as `handle.cancel()`). */
  signal?: AbortSignal;
  /**
   * XState inspection events of the turn and every child (steps, scheduler, calls): for UIs. A
   * listener (typed: `ev.actorRef.id` needs no cast) or an observer such as `@statelyai/inspect`'s
   * `inspector.inspect`. The turn actor is `systemId: 'turn'` (id: the turn id).
   */
  inspect?: InspectOption;
  /** The stage events of this turn's calls (same as `handle.onStage(listener)` before anything runs). */
  onStage?: StageListener;
  /** Per-request settings (max output tokens, temperature, tool choice, provider options, headers), over the runtime's. */
  callOptions?: ModelCallOptions;
  /**
   * Options of the follow-up turns made from this turn (a late `steer`, `followUp` while it is the
   * latest turn), over this turn's own: e.g. a fresh model for each turn. Default: this turn's options.
   */
  followUpOptions?: () => Partial<Omit<TurnOptions, 'input'>>;
}

/**
 * Where a steering message went: into the running turn (logged as `user/steer` in step
 * `stepIndex`, before that step's model request), or, when the turn had no request left to make,
 * into a follow-up turn of its own (`turn/start` with `followUp.kind: 'late-steer'`).
 */
export type SteerOutcome =
  | { readonly delivered: 'steer'; readonly stepIndex: number; readonly seq: number }
  | { readonly delivered: 'follow-up'; readonly turn: TurnHandle };

/**
 * How a turn ended, with the model's final answer text and the tokens it used. `suspended`: the
 * turn waits for approvals that outlive the process (`suspension` is its `turn/suspended` event);
 * it has no `turn/end` yet, and `resumeTurn` continues it.
 */
export type TurnResult = Omit<TurnOutput, 'outcome'> &
  TurnAnswer & { readonly outcome: TurnOutcome | 'suspended'; readonly suspension?: LogEventOf<'turn/suspended'> };

/** What resumes a suspended turn: its suspension read from the log, and its resumed step's pieces. */
export interface TurnResume {
  readonly pending: PendingSuspension;
  readonly step: ResumedStep;
}

/**
 * A running turn, as `runtime.startTurn` returns it: its id, its live actor, its lifecycle and how it ends.
 *
 * @example
 * ```ts
 * const turn = rt.startTurn({ model, input: 'read a.txt' });
 * turn.actor.subscribe((snapshot) => {});
 * const { outcome } = await turn.done; // 'completed' | 'cancelled' | 'failed' | 'max-steps'
 * ```
 */
export interface TurnHandle {
  readonly turnId: string;
  /**
   * The turn actor: subscribe for snapshots; children are the step and its scheduler (its running calls are its children `call-<index>`; `callsOf(schedulerSnapshot)` lists them in order). A turn
   * started while another runs is queued: its actor starts only when the turns before it have ended.
   */
  readonly actor: ActorRefFrom<typeof turnMachine>;
  /**
   * The turn's lifecycle as a person waits on it (machines/turnLifecycle.ts): `queued`,
   * `preparing`, `live.running`, `live.suspending`, `live.cancelling`, `suspended`, `ended`; its
   * `steering` child is `waiting` while a steer waits for the next model request.
   */
  readonly lifecycle: ActorRefFrom<typeof turnLifecycleMachine>;
  /** Settles after `turn/end` is in the log. Never rejects for tool or model failures. */
  readonly done: Promise<TurnResult>;
  /** Cancels the turn; a queued turn cancelled before it starts ends `cancelled` without a model request. */
  cancel(reason?: string): void;
  /**
   * Hears the stage events of this turn's calls from now on (`stage/entered` / `stage/exited`);
   * returns the remover. Listeners are dropped when the turn ends.
   */
  onStage(listener: StageListener): () => void;
  /**
   * Every text and reasoning delta of the turn as it streams, in order and tagged with its step;
   * then `step-end` per step and `turn-end`. Returns the unsubscribe function. Subscribe right after
   * `startTurn`: nothing streams before it returns, and nothing is replayed.
   */
  onDelta(listener: (delta: TurnDelta) => void): () => void;
  /** The same deltas as an async iterable, from now until `turn-end`. */
  deltas(): AsyncIterable<TurnDelta>;
  /**
   * A message for the running turn: it is logged (`user/steer`) and enters the prompt before the
   * turn's next model request, that is after every result of the current step is committed (never
   * inside a tool batch). A steer the turn can no longer deliver (the turn ended, or its last step
   * was already under way: it answered, ran out of steps, failed or was cancelled) becomes a
   * follow-up turn, queued like any turn (`turn/start` with `followUp.kind: 'late-steer'`); several
   * undelivered steers make one turn. Settles before `done` does. Throws a TypeError for an empty message.
   */
  steer(message: string): Promise<SteerOutcome>;
}

/** Compacts the model's view of the log; returns true only when the projected prompt shrank. */
export type CompactFn = (ctx: { log: SessionLog; turnId: string; system?: string; argLimits?: ArgLimits }) => boolean;

export interface TurnRunnerDeps {
  log: SessionLog;
  pipeline: CallStages;
  clock: Clock;
  concurrency: number;
  tools: () => readonly AnyTool[];
  /** Runs before each model request, when no call of this turn is in flight: registry changes land here. */
  beforeStep?: () => void;
  /** Told when a turn starts and when it has ended. */
  onTurnActive?: (delta: 1 | -1) => void;
  retryPolicy?: RequestRetryPolicy;
  compact: CompactFn;
  newTurnId: () => string;
  /** Default per-request settings for every turn. */
  callOptions?: ModelCallOptions;
  /** Raw call arguments are parsed for the prompt only within these limits (the validation limits). */
  argLimits?: ArgLimits;
  /** The window every request must fit in: old results and turns are compacted to stay inside it. */
  contextWindow?: ContextWindow;
  /** The stage stream `pipeline` reports to: a turn's `onStage` hears its own calls there. */
  stages?: StageStream;
  /** Inspection of every turn, beside each turn's own `inspect`. */
  inspect?: InspectOption;
  /** Where `suspend` answers park their calls (issue 15.4); absent: turns never suspend. */
  suspensions?: ReturnType<typeof createSuspensionRequests>;
  /** Resolves once the log is durable up to `seq` (a JSONL log); a suspended turn settles after its `turn/suspended` is. */
  whenDurable?: (seq: number) => Promise<void> | undefined;
  /** True while the session has a suspended turn: a queued turn does not begin then. */
  isSuspended?: () => boolean;
}

/** A turn as the runner starts it: a follow-up or late steer records what it follows. */
export type InternalTurnOptions = TurnOptions & { followUp?: { kind: 'follow-up' | 'late-steer'; after: string } };
