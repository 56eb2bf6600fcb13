/**
 * A session's log events as the wire sends them: each once it is durable (SPEC §11.1). An event a
 * page saw must still be in the log after a crash, or a restarted server would give its `seq` to
 * another event and the page would skip that one. Events are published in `seq` order to every
 * connection of the session; one feed per session, however many pages follow it. Browser-safe.
 */
import type { LogEvent } from '../protocol/index.js';
import type { HostedSession } from './hostedSession.js';

export interface DurableFeed {
  /** Hears every event from now on, once durable and in `seq` order; `onFail` when the log cannot make one durable. Returns the remover. */
  subscribe(listener: (event: LogEvent) => void, onFail: (error: unknown) => void): () => void;
  /** Resolves once every event the log holds now is durable (rejects when one cannot be made so). */
  settled(): Promise<void>;
  close(): void;
}

export function durableFeed(session: Pick<HostedSession, 'log'>): DurableFeed {
  const { log } = session;
  const listeners = new Map<(e: LogEvent) => void, (error: unknown) => void>();
  /** Appended, not yet published (waiting to be durable), oldest first. */
  const waiting: LogEvent[] = [];
  let draining = false;
  let failed: unknown;

  const publish = (e: LogEvent) => {
    for (const l of [...listeners.keys()]) {
      try {
        l(e);
      } catch {
        // One connection failing does not stop the others.
      }
    }
  };
  const fail = (error: unknown) => {
    failed = error;
    waiting.length = 0;
    for (const onFail of [...listeners.values()]) onFail(error);
    listeners.clear();
  };
  const drain = async () => {
    if (draining) return;
    draining = true;
    try {
      while (waiting.length > 0 && failed === undefined) {
        const last = waiting[waiting.length - 1]!;
        const pending = log.whenDurable?.(last.seq);
        if (pending) await pending;
        // Events appended while waiting stay for the next round.
        const later = waiting.findIndex((e) => e.seq > last.seq);
        for (const e of waiting.splice(0, later === -1 ? waiting.length : later)) publish(e);
      }
    } catch (e) {
      fail(e);
    } finally {
      draining = false;
    }
  };
  const off = log.subscribe((e) => {
    if (failed !== undefined) return;
    const pending = waiting.length === 0 ? log.whenDurable?.(e.seq) : undefined;
    if (waiting.length === 0 && pending === undefined) return publish(e);
    waiting.push(e);
    void drain();
  });

  return {
    subscribe(listener, onFail) {
      if (failed !== undefined) {
        onFail(failed);
        return () => undefined;
      }
      listeners.set(listener, onFail);
      return () => void listeners.delete(listener);
    },
    async settled() {
      if (failed !== undefined) throw failed;
      const pending = log.whenDurable?.(log.lastSeq);
      if (pending) await pending;
    },
    close() {
      off();
      listeners.clear();
    },
  };
}
