/**
 * Suspending a turn on its approvals (the approval service answered `suspend`). The call that asked
 * stays in `awaitingApproval`, parked; the turn is suspended once its step is quiet: the model's
 * response is complete (the step waits for its tools), and every call still running is parked on
 * its approval. Calls before the parked ones have committed by then; calls after them that already
 * settled are *held* (ordered commit keeps them back) and their results go into the log's
 * `turn/suspended` event; calls not started stay so. Then the turn actor is stopped: nothing of the
 * turn lives on in memory, and the process may exit. `resumeSession` (resumeTurn.ts) continues it
 * from the log.
 *
 * The step's snapshot is read here (its state, finish reason, usage, the scheduler's batch): that
 * is the only place that knows those machine internals. Browser-safe.
 */
import type { ActorRefFrom } from 'xstate';
import type { LogEventOf, NewLogEvent } from '../../protocol/index.js';
import type { turnMachine } from '../../../machines/turn.js';
import type { QuietStep } from '../../../machines/turnLifecycle.js';

type TurnActor = ActorRefFrom<typeof turnMachine>;

/** Calls parked on a `suspend` answer, by turn: the approval stage fills it, the turn runner reads it. */
export interface SuspensionRequests {
  /** A call asked to suspend its turn; false when its turn cannot be suspended (then it is denied). */
  park(turnId: string | undefined, callId: string): boolean;
  /** The parked call left `awaitingApproval` (cancelled, timed out): it no longer holds the turn. */
  unpark(turnId: string | undefined, callId: string): void;
}

/** A running turn watched for a suspension; the turn's lifecycle decides when to suspend it. */
export interface TurnSuspension {
  /** Logs `turn/suspended` for the quiet step and stops watching (the lifecycle then stops the turn actor). */
  suspend(quiet: QuietStep): LogEventOf<'turn/suspended'>;
  /** Stops watching (the turn ended by itself, or is suspended). */
  dispose(): void;
}

interface Watched {
  park(callId: string): void;
  unpark(callId: string): void;
}

/** What a watcher tells the turn's lifecycle (machines/turnLifecycle.ts). */
export interface SuspensionWatch {
  readonly actor: TurnActor;
  readonly turnId: string;
  readonly append: (e: NewLogEvent) => { seq: number };
  /** The first call parked (`PARKED`). */
  onParked(): void;
  /** No parked call is left (`UNPARKED`). */
  onUnparked(): void;
  /** The step is quiet with calls parked (`QUIET`): never called inside an actor's own processing. */
  onQuiet(quiet: QuietStep): void;
}

/** The registry shared by the runtime's approval stage and its turn runner. */
export function createSuspensionRequests() {
  const turns = new Map<string, Watched>();
  const parkListeners = new Set<(turnId: string, callId: string) => void>();
  const requests: SuspensionRequests = {
    park(turnId, callId) {
      const w = turnId === undefined ? undefined : turns.get(turnId);
      if (!w) return false;
      w.park(callId);
      for (const l of parkListeners) l(turnId!, callId);
      return true;
    },
    unpark(turnId, callId) {
      if (turnId !== undefined) turns.get(turnId)?.unpark(callId);
    },
  };

  /** Watches one running turn: tells its lifecycle when a call parks, and when the step is quiet. */
  function watch(o: SuspensionWatch): TurnSuspension {
    let scheduled = false;
    let over = false;
    let inspecting: { unsubscribe(): void } | undefined;
    const parked = new Set<string>();
    const dispose = () => {
      over = true;
      turns.delete(o.turnId);
      inspecting?.unsubscribe();
      inspecting = undefined;
    };
    const tryNow = () => {
      scheduled = false;
      if (over || parked.size === 0) return;
      const quiet = quietStep(o.actor, parked);
      if (quiet) o.onQuiet(quiet);
    };
    const check = () => {
      if (scheduled || over) return;
      scheduled = true;
      // Never inside an actor's own processing: stopping the turn there would cut it mid-step.
      queueMicrotask(tryNow);
    };
    turns.set(o.turnId, {
      park(callId) {
        const first = parked.size === 0;
        parked.add(callId);
        if (first) o.onParked();
        // Every snapshot change of the turn's actors may make the step quiet: watched only while a
        // call is parked (an inspector costs every actor of the turn a little per event).
        inspecting ??= o.actor.system.inspect(check);
        check();
      },
      unpark(callId) {
        if (parked.delete(callId) && parked.size === 0) o.onUnparked();
      },
    });
    return {
      suspend(quiet) {
        const event = o.append({ type: 'turn/suspended', turnId: o.turnId, ...quiet }) as unknown as LogEventOf<'turn/suspended'>;
        dispose();
        return event;
      },
      dispose,
    };
  }

  /** Told of every call parked (a resumed step lets its other calls go on when its pending ones park again). */
  function onPark(listener: (turnId: string, callId: string) => void): () => void {
    parkListeners.add(listener);
    return () => parkListeners.delete(listener);
  }

  return { requests, watch, onPark };
}


/** The step's state when it may be suspended now; undefined while something still moves. */
function quietStep(turn: TurnActor, parked: ReadonlySet<string>): QuietStep | undefined {
  const t = turn.getSnapshot();
  if (t.status !== 'active' || t.context.cancelled) return undefined;
  const step = t.children.step?.getSnapshot();
  // The model's response must be complete: a call it had not sent yet would be lost.
  if (!step || step.status !== 'active' || !step.matches('awaitingTools') || step.context.cancelled) return undefined;
  const scheduler = step.children.scheduler?.getSnapshot();
  if (!scheduler || scheduler.status !== 'active') return undefined;
  const calls: QuietStep['calls'] = [];
  const held: QuietStep['held'] = [];
  for (const e of scheduler.context.gate.entries) {
    if (e.status === 'running') {
      if (!parked.has(e.request.callId)) return undefined;
      calls.push({ callId: e.request.callId, callSeq: e.callSeq });
    } else if (e.status === 'settled') {
      held.push({ callId: e.request.callId, callSeq: e.callSeq, result: e.result! });
    }
  }
  if (calls.length === 0) return undefined;
  return {
    stepIndex: step.context.stepIndex,
    finishReason: step.context.finishReason,
    ...(step.context.usage ? { usage: step.context.usage } : {}),
    calls,
    held,
  };
}
