/**
 * The live text of a turn for UIs: every text and reasoning delta as its step receives it, in
 * order, tagged with the step, then an end marker per step and one for the turn. The log keeps the
 * same text coalesced (`llm/stream`); this is the uncoalesced stream, kept nowhere. Browser-safe.
 */
import type { LogEvent, TurnOutcome } from '../protocol/index.js';
import type { SessionLog } from './log/sessionLog.js';

/** What a UI gets as a turn streams: text and reasoning deltas, the end of a step, a failed request, the end of the turn. */
export type TurnDelta =
  /** A piece of the model's answer (`text`) or of its reasoning, in arrival order. */
  | { readonly type: 'text-delta' | 'reasoning-delta'; readonly stepIndex: number; readonly delta: string }
  /**
   * A request of this step failed after some of its text had streamed (`agent/request-error`): that
   * partial text is not part of the model's answer (the prompt drops it too); a retry streams anew.
   */
  | { readonly type: 'request-error'; readonly stepIndex: number; readonly action: 'retry' | 'compact' | 'give-up' }
  /** The step ended (`step/end` is in the log): no more deltas for it. */
  | { readonly type: 'step-end'; readonly stepIndex: number; readonly finishReason: string }
  /** The turn ended (`turn/end` is in the log): the last delta. */
  | { readonly type: 'turn-end'; readonly outcome: TurnOutcome | 'suspended' };

/** Where a turn's deltas are published to their listeners. */
export interface TurnDeltaHub {
  /** What the step reports (wired to `StepDeps.onText`): cheap when nobody listens. */
  text(stepIndex: number, kind: 'text' | 'reasoning', delta: string): void;
  /** Adds a listener of the deltas from now on; returns its remover. */
  subscribe(listener: (d: TurnDelta) => void): () => void;
  /** The deltas from now on as an async iterable that ends after `turn-end`. */
  iterate(): AsyncIterable<TurnDelta>;
  /** Ends the stream without a `turn/end` in the log (the turn actor itself failed). */
  end(outcome: TurnOutcome | 'suspended'): void;
}

/** One turn's hub: step and turn markers come from the log, watched only while someone listens. */
export function createTurnDeltaHub(log: Pick<SessionLog, 'subscribe'>, turnId: string): TurnDeltaHub {
  const listeners = new Set<(d: TurnDelta) => void>();
  let ended: TurnDelta | undefined;
  let unwatch: (() => void) | undefined;
  const emit = (d: TurnDelta) => {
    for (const l of [...listeners]) {
      try {
        l(d);
      } catch {
        // A listener (a UI) cannot break the turn.
      }
    }
  };
  const end = (outcome: TurnOutcome | 'suspended') => {
    if (ended) return;
    ended = { type: 'turn-end', outcome };
    unwatch?.();
    unwatch = undefined;
    emit(ended);
    listeners.clear();
  };
  const onEvent = (e: LogEvent) => {
    if (!('turnId' in e) || e.turnId !== turnId) return;
    if (e.type === 'step/end') emit({ type: 'step-end', stepIndex: e.stepIndex, finishReason: e.finishReason });
    else if (e.type === 'agent/request-error') emit({ type: 'request-error', stepIndex: e.stepIndex, action: e.action });
    else if (e.type === 'turn/end') end(e.outcome);
  };
  const subscribe = (listener: (d: TurnDelta) => void) => {
    if (ended) {
      listener(ended);
      return () => {};
    }
    listeners.add(listener);
    unwatch ??= log.subscribe(onEvent);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && unwatch) {
        unwatch();
        unwatch = undefined;
      }
    };
  };
  return {
    text(stepIndex, kind, delta) {
      if (listeners.size) emit({ type: kind === 'text' ? 'text-delta' : 'reasoning-delta', stepIndex, delta });
    },
    subscribe,
    end,
    iterate() {
      const queue: TurnDelta[] = [];
      let wake: (() => void) | undefined;
      let done = false;
      const stop = subscribe((d) => {
        queue.push(d);
        if (d.type === 'turn-end') done = true;
        wake?.();
      });
      return {
        [Symbol.asyncIterator]() {
          return {
            async next(): Promise<IteratorResult<TurnDelta>> {
              while (queue.length === 0) {
                if (done) return { done: true, value: undefined };
                await new Promise<void>((r) => (wake = r));
                wake = undefined;
              }
              return { done: false, value: queue.shift()! };
            },
            async return(): Promise<IteratorResult<TurnDelta>> {
              stop();
              done = true;
              queue.length = 0;
              return { done: true, value: undefined };
            },
          };
        },
      };
    },
  };
}
