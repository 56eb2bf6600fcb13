/**
 * A `LogSink` that writes a session's events to a `SessionStore` with group commit
 * (machines/groupCommit.ts decides when): `write` only
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
import { createActor, waitFor } from 'xstate';
import { changesAnything, CLOSE, COMMIT, groupCommitMachine, SOON } from '../../../machines/groupCommit.js';
import type { LogEvent, LogEventType } from '../../protocol/index.js';
import { durabilityWaiters } from '../log/durabilityWaiters.js';
import type { Lease, SessionStore } from './sessionStore.js';

export const STORE_COMMIT_ON: readonly LogEventType[] = ['tool/result', 'step/end', 'turn/end'];

/** How a store sink group-commits: commit points, buffer size, and who hears its failure. */
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

/** A log sink that group-commits to a session store under a lease. */
export interface StoreSink {
  /** Buffers an appended event (committed at the next commit point). */
  write(event: LogEvent): void;
  /** Settles once event `seq` is in the store; undefined when it already is. */
  whenDurable(seq: number): Promise<void> | undefined;
  /** `seq` of the last event the store holds. */
  readonly durableSeq: number;
  /** Appends so far. */
  readonly commits: number;
  /** The error that failed the sink, if any. */
  readonly failure: Error | undefined;
  /** Commits what is buffered now. */
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
  let closed = false;
  let failure: Error | undefined;
  const waiters = durabilityWaiters();

  const fail = (e: unknown) => {
    if (!failure) {
      failure = e instanceof Error ? e : new Error(String(e));
      options.onError?.(failure);
    }
    buffer = [];
    waiters.reject(failure);
  };
  // When an append goes out is the group-commit machine's (machines/groupCommit.ts); appending is this.
  const groups = createActor(groupCommitMachine, {
    input: {
      port: {
        async commit() {
          if (buffer.length === 0) return durableSeq;
          const batch = buffer;
          buffer = [];
          await store.append(lease(), durableSeq, batch);
          commits++;
          return batch[batch.length - 1]!.seq;
        },
        committed(seq) {
          durableSeq = Math.max(durableSeq, seq);
          waiters.settle(durableSeq);
        },
        wait(_when, due) {
          // Only `soon` is asked for (this sink has no lazy delay): on the next task.
          const t = setTimeout(due, 0);
          return () => clearTimeout(t);
        },
        failed: fail,
      },
    },
  }).start();

  /** Tells the machine, unless it would change nothing (every commit point asks). */
  const ask = (a: typeof COMMIT | typeof SOON) => {
    if (changesAnything(groups.getSnapshot(), a.type)) groups.send(a);
  };

  function flush(): Promise<void> {
    if (failure) return Promise.reject(failure);
    if (lastSeq <= durableSeq) return Promise.resolve();
    const p = waiters.add(lastSeq);
    ask(COMMIT);
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
      if (commitOn.has(event.type) || buffer.length >= maxBuffer) ask(COMMIT);
    },
    whenDurable(seq) {
      if (failure) return Promise.reject(failure);
      const target = Math.min(seq, lastSeq);
      if (target <= durableSeq) return undefined;
      const p = waiters.add(target);
      // On the next task, not now: calls dispatched in the same burst share one append.
      ask(SOON);
      return p;
    },
    flush,
    async close() {
      if (closed) return;
      await flush();
      closed = true;
      groups.send(CLOSE);
      await waitFor(groups, (s) => s.status === 'done');
    },
  };
}
