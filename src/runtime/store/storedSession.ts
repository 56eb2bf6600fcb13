/**
 * A session opened from a `SessionStore` by the holder of its lease: the lease is kept renewed
 * while the session is open, its events are replayed into a `SessionLog` whose new events go to the
 * store through a group-commit sink (storeSink.ts), and `whenDurable` is the sink's, so no tool
 * body runs before its `tool/call` is in the store. When the lease is lost (not renewed in time,
 * taken over) the sink fails at its next append and nothing more is written. Browser-safe.
 */
import type { Clock } from '../clock.js';
import { createMemoryLog, type SessionLog } from '../log/sessionLog.js';
import type { Lease, SessionStore } from './sessionStore.js';
import { createStoreSink, type StoreSink, type StoreSinkOptions } from './storeSink.js';

export interface LeaseKeeper {
  /** The lease as last renewed. */
  readonly lease: Lease;
  /** Set once a renewal failed (the lease is lost: appends will be refused). */
  readonly lost: Error | undefined;
  /** Stops renewing and releases the lease (unless lost). */
  release(): Promise<void>;
}

/** Renews `lease` every `ttlMs / 3` until released; a failed renewal marks it lost and stops. */
export function keepLease(store: SessionStore, lease: Lease, ttlMs: number, onLost?: (e: Error) => void): LeaseKeeper {
  let current = lease;
  let lost: Error | undefined;
  let stopped = false;
  let renewing: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    if (stopped || lost) return;
    renewing = store.renew(current, ttlMs).then(
      (l) => {
        if (!stopped) current = l;
      },
      (e: unknown) => {
        lost = e instanceof Error ? e : new Error(String(e));
        clearInterval(timer);
        onLost?.(lost);
      },
    );
  }, Math.max(10, Math.floor(ttlMs / 3)));
  (timer as { unref?: () => void }).unref?.();
  return {
    get lease() {
      return current;
    },
    get lost() {
      return lost;
    },
    async release() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await renewing;
      if (!lost) await store.release(current);
    },
  };
}

export interface OpenStoredSessionOptions extends Omit<StoreSinkOptions, 'lastSeq'> {
  clock?: Clock;
}

/** Replays the session from the store into a log that appends back to it under `keeper`'s lease. */
export async function openStoredSessionLog(
  store: SessionStore,
  keeper: Pick<LeaseKeeper, 'lease'>,
  options: OpenStoredSessionOptions = {},
): Promise<{ log: SessionLog; sink: StoreSink }> {
  const events = await store.read(keeper.lease.sessionId);
  const sink = createStoreSink(store, () => keeper.lease, { ...options, lastSeq: events.length ? events[events.length - 1]!.seq : 0 });
  return { log: createMemoryLog({ clock: options.clock, initial: events, sink }), sink };
}
