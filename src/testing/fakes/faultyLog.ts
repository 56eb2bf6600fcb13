/**
 * A session log for tests that fails at append *k*: either the append itself throws (`throw`), or
 * the event cannot be made durable (`durability`: as a full disk fails a JSONL log, the runtime's
 * wait before a body rejects). Everything else is the in-memory log.
 */
import type { Clock } from '../../runtime/clock.js';
import { createMemoryLog, type SessionLog } from '../../runtime/log/sessionLog.js';

/** Where a faulty log fails: the append that throws, and the error. */
export interface FaultyLogOptions {
  /** The 1-based append that fails (and every later one). */
  failAt: number;
  /** `throw` (default): the append throws a `LogFaultError` and the event is not kept. `durability`: it is kept, but never durable. */
  how?: 'throw' | 'durability';
  clock?: Clock;
}

/** What a faulty log throws or rejects with. */
export class LogFaultError extends Error {
  override readonly name = 'LogFaultError';
  constructor(readonly append: number) {
    super(`faultyLog: append #${append} failed (injected by the test)`);
  }
}

/** A log that fails at append `failAt`; `appends` counts the appends tried. */
export function faultyLog(options: FaultyLogOptions): SessionLog & { readonly appends: number } {
  let appends = 0;
  const how = options.how ?? 'throw';
  const inner = createMemoryLog({
    ...(options.clock ? { clock: options.clock } : {}),
    ...(how === 'durability'
      ? { sink: { write: () => undefined, whenDurable: (seq: number) => (seq >= options.failAt ? Promise.reject(new LogFaultError(seq)) : undefined) } }
      : {}),
  });
  const log: SessionLog & { readonly appends: number } = {
    append(event) {
      appends++;
      if (how === 'throw' && appends >= options.failAt) throw new LogFaultError(appends);
      return inner.append(event);
    },
    events: (range) => inner.events(range),
    get: (seq) => inner.get(seq),
    get lastSeq() {
      return inner.lastSeq;
    },
    subscribe: (listener) => inner.subscribe(listener),
    get index() {
      return inner.index;
    },
    get appends() {
      return appends;
    },
    ...(inner.whenDurable ? { whenDurable: inner.whenDurable } : {}),
  };
  return log;
}
