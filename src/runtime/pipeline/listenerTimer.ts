/**
 * The hook timeout of a listener stage: one timer on the injected clock, re-armed each time the
 * stage starts waiting on another listener, so every asynchronous listener gets its own
 * `hookTimeoutMs` (SPEC §8.15) and a slow listener does not eat the budget of the ones after it.
 */
import type { Clock } from '../clock.js';

export interface ListenerTimer {
  /** The stage now waits on `listener`: it gets a full budget unless it already is the one waited on. */
  waitOn(listener: string): void;
  /** The stage is done: no timeout can fire any more. */
  stop(): void;
}

/** Calls `expired(listener)` once, when the listener waited on has not answered within `ms`. */
export function listenerTimer(clock: Clock, ms: number, expired: (listener: string) => void): ListenerTimer {
  let handle: unknown;
  let current: string | undefined;
  let done = false;
  return {
    waitOn(listener) {
      if (done || listener === current) return;
      current = listener;
      clock.clearTimeout(handle); // undefined before the first wait: a no-op
      handle = clock.setTimeout(() => {
        done = true;
        expired(listener);
      }, ms);
    },
    stop() {
      done = true;
      clock.clearTimeout(handle);
    },
  };
}
