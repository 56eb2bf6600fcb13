/**
 * A session opened from a `SessionStore` by the holder of its lease: the lease is kept renewed
 * while the session is open, its events are replayed into a `SessionLog` whose new events go to the
 * store through a group-commit sink (storeSink.ts), and `whenDurable` is the sink's, so no tool
 * body runs before its `tool/call` is in the store. When the lease is lost (not renewed in time,
 * taken over) the sink fails at its next append and nothing more is written. Browser-safe.
 */
import type { Clock } from '../clock.js';
import { createMemoryLog, type SessionLog } from '../log/sessionLog.js';
import { StoreConflictError, type Lease, type SessionStore } from './sessionStore.js';
import { createStoreSink, type StoreSink, type StoreSinkOptions } from './storeSink.js';

/** Renews a lease in the background until stopped, and says when it was lost. */
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

/** How a stored session's log is opened: the clock, and the sink's group commit. */
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

/** How `openStoredSession` takes the session's lease: the owner, its time to live, what to do when it is lost. */
export interface HoldStoredSessionOptions extends OpenStoredSessionOptions {
  /** The lease owner (unique per writer: a process, a job). */
  owner: string;
  /** Lease time to live (renewed every third of it while the session is open). */
  ttlMs: number;
  /** How long to wait for a lease another owner holds (default 0: refused at once), then `LEASE_HELD`. */
  waitMs?: number;
  /** Told when the lease is lost while open (then the sink fails at its next append). */
  onLost?: (e: Error) => void;
}

/** A session held from a store: its log, and `close()` to let it go. */
export interface OpenedStoredSession {
  readonly log: SessionLog;
  readonly sink: StoreSink;
  readonly lease: LeaseKeeper;
  /**
   * Makes what was written durable, then releases the lease (released even when the flush fails).
   * (No `Symbol.asyncDispose` here: this module is in the browser-safe `dsh` entry, whose types must
   * check without the ESNext.Disposable lib; `openJsonlSessionLog`, Node-only, has it.)
   */
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Takes session `sessionId`'s lease in `store` (waiting at most `waitMs` for another owner to let
 * it go, else `LEASE_HELD`), keeps it renewed, and opens its log: the one writer of the session
 * until `close()`.
 */
export async function openStoredSession(store: SessionStore, sessionId: string, o: HoldStoredSessionOptions): Promise<OpenedStoredSession> {
  const waitMs = o.waitMs ?? 0;
  const deadline = Date.now() + waitMs;
  let lease = await store.acquire(sessionId, o.owner, o.ttlMs);
  while (!lease) {
    if (Date.now() >= deadline) throw new StoreConflictError('LEASE_HELD', sessionId, `another owner holds the lease${waitMs > 0 ? ` (waited ${waitMs} ms)` : ''}`);
    await sleep(Math.max(20, Math.floor(o.ttlMs / 4)));
    lease = await store.acquire(sessionId, o.owner, o.ttlMs);
  }
  const keeper = keepLease(store, lease, o.ttlMs, o.onLost);
  let opened: { log: SessionLog; sink: StoreSink };
  try {
    const { owner: _owner, ttlMs: _ttl, waitMs: _wait, onLost: _onLost, ...logOptions } = o;
    opened = await openStoredSessionLog(store, keeper, logOptions);
  } catch (e) {
    await keeper.release();
    throw e;
  }
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      try {
        await opened.sink.close();
      } finally {
        await keeper.release();
      }
    })());
  return { ...opened, lease: keeper, close };
}
