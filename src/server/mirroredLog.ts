/**
 * A session log another writer appends to, mirrored in this process: a worker's (read from the
 * store) or another process's JSONL file (`dsh inspect --follow`). Events arrive already stamped
 * (`seq`, `time`); each is told to the subscribers as it is mirrored, and one that does not follow
 * the last (`seq` + 1) is refused, so the mirror never has a gap or a repeat. Browser-safe.
 */
import type { LogEvent } from '../protocol/index.js';
import type { HostedSession } from './hostedSession.js';

export interface MirroredLog {
  /** The mirror, as a hosted session reads a log. */
  readonly log: HostedSession['log'];
  /** Adds the next event; false (and nothing changes) when its `seq` is not the last one's + 1. */
  push(event: LogEvent): boolean;
}

/** A mirror holding `initial` (consecutive events; the first may be past 1: a log resumed from a checkpoint). */
export function mirroredLog(initial: readonly LogEvent[] = []): MirroredLog {
  const events: LogEvent[] = [];
  const listeners = new Set<(e: LogEvent) => void>();
  const first = initial[0]?.seq ?? 1;
  const lastSeq = () => (events.length === 0 ? first - 1 : events[events.length - 1]!.seq);
  const push = (e: LogEvent) => {
    if (e.seq !== lastSeq() + 1) return false;
    events.push(e);
    for (const l of [...listeners]) {
      try {
        l(e);
      } catch {
        // A subscriber (one page's feed) cannot break the mirror.
      }
    }
    return true;
  };
  for (const e of initial) if (!push(e)) throw new Error(`mirrored log: expected seq ${lastSeq() + 1}, got ${e.seq}`);
  const log: HostedSession['log'] = {
    events(range) {
      const from = Math.max(first, range?.from ?? first);
      const to = Math.min(lastSeq(), range?.to ?? lastSeq());
      return from > to ? [] : events.slice(from - first, to - first + 1);
    },
    get: (seq) => (seq >= first ? events[seq - first] : undefined),
    get lastSeq() {
      return lastSeq();
    },
    ...(first > 1 ? { firstSeq: first } : {}),
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
  return { log, push };
}
