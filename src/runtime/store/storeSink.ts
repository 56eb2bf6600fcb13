/**
 * A `LogSink` that writes a session's events to a `SessionStore` with group commit: `write` only
 * buffers; at a commit point (`tool/result`, `step/end`, `turn/end`, or a large buffer), or when
 * the runtime asks `whenDurable` before a tool body runs, the buffered events go out in one
 * conditional append (expected `seq` + the lease's fencing token). While one append is in flight,
 * later events gather and go out together with the next, so a burst costs one round trip.
 *
 * The first refused or failed append fails the sink for good: every waiter rejects (so no further
 * tool body runs: the runtime settles such calls ABORTED_BEFORE_DISPATCH), later writes are
 * dropped, `onError` is told once. A writer that lost its lease thus stops at its next commit.
 * Browser-safe.
 */
import type { LogEvent, LogEventType } from '../../protocol/index.js';
import type { Lease, SessionStore } from './sessionStore.js';

export const STORE_COMMIT_ON: readonly LogEventType[] = ['tool/result', 'step/end', 'turn/end'];

export interface StoreSinkOptions {
  /** The session's last `seq` in the store when the sink starts (what the first append expects). */
  lastSeq: number;
  /** Event types that are commit points (default `tool/result`, `step/end`, `turn/end`). */
  commitOn?: readonly LogEventType[];
  /** Buffered events that force a commit without a commit point (default 256). */
  maxBufferEvents?: number;
  /** Called once with the first failure. */
  onError?: (error: Error) => void;
}

export interface StoreSink {
  write(event: LogEvent): void;
  whenDurable(seq: number): Promise<void> | undefined;
  /** `seq` of the last event the store holds. */
  readonly durableSeq: number;
  /** Appends so far. */
  readonly commits: number;
  /** The error that failed the sink, if any. */
  readonly failure: Error | undefined;
  flush(): Promise<void>;
  /** Flushes; later writes throw. */
  close(): Promise<void>;
}

/** `lease()` is read at each append (a renewed lease is a new object with the same token). */
export function createStoreSink(store: SessionStore, lease: () => Lease, options: StoreSinkOptions): StoreSink {
  const commitOn = new Set<string>(options.commitOn ?? STORE_COMMIT_ON);
  const maxBuffer = options.maxBufferEvents ?? 256;
  let buffer: LogEvent[] = [];
  let lastSeq = options.lastSeq;
  let durableSeq = options.lastSeq;
  let commits = 0;
  let inFlight = false;
  let soon = false;
  let closed = false;
  let failure: Error | undefined;
  const waiters: Array<{ seq: number; resolve: () => void; reject: (e: Error) => void }> = [];

  const fail = (e: unknown) => {
    if (!failure) {
      failure = e instanceof Error ? e : new Error(String(e));
      options.onError?.(failure);
    }
    buffer = [];
    for (const w of waiters.splice(0)) w.reject(failure);
  };
  const settle = () => {
    for (let i = waiters.length - 1; i >= 0; i--) if (waiters[i]!.seq <= durableSeq) waiters.splice(i, 1)[0]!.resolve();
  };
  const startAppend = () => {
    if (failure || inFlight) return;
    if (buffer.length === 0) return settle();
    const batch = buffer;
    buffer = [];
    inFlight = true;
    let l: Lease;
    try {
      l = lease();
    } catch (e) {
      inFlight = false;
      return fail(e);
    }
    store.append(l, durableSeq, batch).then(
      () => {
        inFlight = false;
        commits++;
        durableSeq = batch[batch.length - 1]!.seq;
        settle();
        if (buffer.length > 0 && (waiters.length > 0 || buffer.some((e) => commitOn.has(e.type)) || buffer.length >= maxBuffer)) startAppend();
      },
      (e: unknown) => {
        inFlight = false;
        fail(e);
      },
    );
  };
  const waitFor = (seq: number) =>
    new Promise<void>((resolve, reject) => {
      waiters.push({ seq, resolve, reject });
    });

  function flush(): Promise<void> {
    if (failure) return Promise.reject(failure);
    if (lastSeq <= durableSeq) return Promise.resolve();
    const p = waitFor(lastSeq);
    startAppend();
    return p;
  }

  return {
    get durableSeq() {
      return durableSeq;
    },
    get commits() {
      return commits;
    },
    get failure() {
      return failure;
    },
    write(event) {
      if (closed) throw new Error(`session ${lease().sessionId}: the store sink is closed`);
      if (failure) return;
      buffer.push(event);
      lastSeq = event.seq;
      if (commitOn.has(event.type) || buffer.length >= maxBuffer) startAppend();
    },
    whenDurable(seq) {
      if (failure) return Promise.reject(failure);
      const target = Math.min(seq, lastSeq);
      if (target <= durableSeq) return undefined;
      const p = waitFor(target);
      // On the next task, not now: calls dispatched in the same burst share one append.
      if (!soon) {
        soon = true;
        setTimeout(() => {
          soon = false;
          startAppend();
        }, 0);
      }
      return p;
    },
    flush,
    async close() {
      if (closed) return;
      await flush();
      closed = true;
    },
  };
}
