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

type TurnActor = ActorRefFrom<typeof turnMachine>;

/** Calls parked on a `suspend` answer, by turn: the approval stage fills it, the turn runner reads it. */
export interface SuspensionRequests {
  /** A call asked to suspend its turn; false when its turn cannot be suspended (then it is denied). */
  park(turnId: string | undefined, callId: string): boolean;
  /** The parked call left `awaitingApproval` (cancelled, timed out): it no longer holds the turn. */
  unpark(turnId: string | undefined, callId: string): void;
}

export interface TurnSuspension {
  /** The `turn/suspended` event, once the turn is suspended. */
  readonly event: LogEventOf<'turn/suspended'> | undefined;
  /** Stops watching (the turn ended by itself). */
  dispose(): void;
}

interface Watched {
  readonly parked: Set<string>;
  check(): void;
}

/** The registry shared by the runtime's approval stage and its turn runner. */
export function createSuspensionRequests() {
  const turns = new Map<string, Watched>();
  const parkListeners = new Set<(turnId: string, callId: string) => void>();
  const requests: SuspensionRequests = {
    park(turnId, callId) {
      const w = turnId === undefined ? undefined : turns.get(turnId);
      if (!w) return false;
      w.parked.add(callId);
      for (const l of parkListeners) l(turnId!, callId);
      w.check();
      return true;
    },
    unpark(turnId, callId) {
      if (turnId !== undefined) turns.get(turnId)?.parked.delete(callId);
    },
  };

  /** Watches one running turn: once a call is parked and the step is quiet, logs `turn/suspended` and stops the actor. */
  function watch(o: { actor: TurnActor; turnId: string; append: (e: NewLogEvent) => { seq: number }; onSuspended: () => void }): TurnSuspension {
    let event: LogEventOf<'turn/suspended'> | undefined;
    let scheduled = false;
    let inspecting: { unsubscribe(): void } | undefined;
    const parked = new Set<string>();
    const dispose = () => {
      turns.delete(o.turnId);
      inspecting?.unsubscribe();
      inspecting = undefined;
    };
    const tryNow = () => {
      scheduled = false;
      if (event || parked.size === 0) return;
      const quiet = quietStep(o.actor, parked);
      if (!quiet) return;
      event = o.append({ type: 'turn/suspended', turnId: o.turnId, ...quiet }) as unknown as LogEventOf<'turn/suspended'>;
      dispose();
      o.onSuspended();
      o.actor.stop();
    };
    const w: Watched = {
      parked,
      check() {
        // Every snapshot change of the turn's actors may make the step quiet: watched only while a
        // call is parked (an inspector costs every actor of the turn a little per event).
        inspecting ??= o.actor.system.inspect(() => w.check());
        if (scheduled || event) return;
        scheduled = true;
        // Never inside an actor's own processing: stopping the turn there would cut it mid-step.
        queueMicrotask(tryNow);
      },
    };
    turns.set(o.turnId, w);
    return {
      get event() {
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

type Quiet = Omit<LogEventOf<'turn/suspended'>, 'type' | 'turnId' | 'seq' | 'time'>;

/** The step's state when it may be suspended now; undefined while something still moves. */
function quietStep(turn: TurnActor, parked: ReadonlySet<string>): Quiet | undefined {
  const t = turn.getSnapshot();
  if (t.status !== 'active' || t.context.cancelled) return undefined;
  const step = t.children.step?.getSnapshot();
  // The model's response must be complete: a call it had not sent yet would be lost.
  if (!step || step.status !== 'active' || !step.matches('awaitingTools') || step.context.cancelled) return undefined;
  const scheduler = step.children.scheduler?.getSnapshot();
  if (!scheduler || scheduler.status !== 'active') return undefined;
  const calls: Quiet['calls'] = [];
  const held: Quiet['held'] = [];
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
