import type { LogEvent, NewLogEvent } from '../../protocol/index.js';
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import { SessionIndex } from './sessionIndex.js';

type Stamped<E> = E & { seq: number; time: number };

/** The append-only session log: the single source of truth. */
export interface SessionLog {
  /** Appends an event, stamping it with the next `seq` (from 1, strictly increasing) and the time. */
  append<E extends NewLogEvent>(event: E): Stamped<E>;
  /**
   * Events with `from <= seq <= to` (both optional, inclusive), of those the log holds: every
   * event, unless it was resumed from a checkpoint (then those after it, see `firstSeq`).
   */
  events(range?: { from?: number; to?: number }): readonly LogEvent[];
  /** The event with this `seq`, if any. */
  get(seq: number): LogEvent | undefined;
  /** `seq` of the last appended event (0 when empty). */
  readonly lastSeq: number;
  /**
   * `seq` of the first event the log holds in memory when it does not hold them all (a session
   * resumed from a checkpoint: what came before is summed up in the checkpoint); absent when it does.
   */
  readonly firstSeq?: number;
  /** Called synchronously after each append; returns an unsubscribe function. */
  subscribe(listener: (event: LogEvent) => void): () => void;
  /**
   * What the runtime knows about the session's history, kept up to date as events arrive (the
   * prompt projection, open work, turns started, approvals to remember: sessionIndex.ts), so that
   * nothing per step or per turn scans the log. A view of another log shares that log's index.
   */
  readonly index: SessionIndex;
  /**
   * Present only when the log persists events (its sink has `whenDurable`): resolves once every
   * event up to `seq` is durable (rejects if it cannot be made so); undefined when it already is.
   * A log without it is durable as soon as an event is appended (the in-memory log).
   */
  readonly whenDurable?: (seq: number) => Promise<void> | undefined;
}

/** Something that persists appended events (a JSONL file, IndexedDB, a server). */
export interface LogSink {
  /** Receives each event as it is appended (in `seq` order); durable writes happen behind it. */
  write(event: LogEvent): void;
  /**
   * Resolves once every event up to `seq` written so far is durable, starting a commit if need be
   * (rejects if it cannot be made so); undefined when it already is. Without it, a write counts
   * as durable at once.
   */
  whenDurable?(seq: number): Promise<void> | undefined;
}

/**
 * Browser-safe in-memory log. Events are frozen (shallowly: results inside are already deep-frozen).
 * `initial`: events already in the log, the first with `seq` `firstSeq` (default 1: a log resumed
 * from a checkpoint holds only what came after it).
 */
export function createMemoryLog(
  options: {
    clock?: Clock;
    sink?: LogSink;
    initial?: readonly LogEvent[];
    firstSeq?: number;
    /** The log's index, already holding `initial` (a checkpoint's); default: built from `initial` on first use. */
    index?: SessionIndex;
  } = {},
): SessionLog {
  const clock = options.clock ?? systemClock;
  const store: LogEvent[] = [];
  const listeners = new Set<(event: LogEvent) => void>();
  /** `seq` of store[0] is offset + 1. */
  const offset = Math.max(0, (options.firstSeq ?? 1) - 1);
  for (const e of options.initial ?? []) {
    if (e.seq !== offset + store.length + 1) throw new Error(`log replay: expected seq ${offset + store.length + 1}, got ${e.seq}`);
    store.push(Object.freeze(e));
  }
  const log: SessionLog = {
    append(event) {
      // Object.assign, not `{ ...event, seq, time }`: V8 (Node 20) takes a slow path for a spread
      // followed by more properties, and this runs for every event of every session.
      const stamped = Object.assign({}, event) as unknown as { seq: number; time: number };
      stamped.seq = offset + store.length + 1;
      stamped.time = clock.now();
      Object.freeze(stamped);
      store.push(stamped as unknown as LogEvent);
      options.sink?.write(stamped as unknown as LogEvent);
      for (const l of listeners) {
        try {
          l(stamped as unknown as LogEvent);
        } catch {
          // A subscriber (a UI view) cannot break the log.
        }
      }
      return stamped as never;
    },
    events(range) {
      const from = Math.max(offset + 1, range?.from ?? 1);
      const to = Math.min(offset + store.length, range?.to ?? offset + store.length);
      return store.slice(from - 1 - offset, to - offset);
    },
    get(seq) {
      return seq > offset ? store[seq - 1 - offset] : undefined;
    },
    get lastSeq() {
      return offset + store.length;
    },
    ...(offset > 0 ? { firstSeq: offset + 1 } : {}),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get index() {
      // Built on first use from what the log holds (one pass), then kept up to date by appends.
      if (!index) {
        const built = (index = new SessionIndex());
        for (const e of store) built.apply(e);
        listeners.add((e) => built.apply(e));
      }
      return index;
    },
  };
  // A given index (a checkpoint's) already holds `initial`: it follows every append from now on.
  let index: SessionIndex | undefined = options.index;
  if (index) {
    const given = index;
    listeners.add((e) => given.apply(e));
  }
  const sink = options.sink;
  if (sink?.whenDurable) return Object.assign(log, { whenDurable: (seq: number) => sink.whenDurable!(seq) });
  return log;
}
