/** What `dsh sessions` shows of one session: when it started, how many turns, how the last one ended. */
import type { LogEvent } from '../../protocol/index.js';
import { findPendingSuspension } from '../../runtime/resume/pendingSuspension.js';

export interface SessionSummary {
  /** Time of the first event (ms since the epoch), if any. */
  start?: number;
  turns: number;
  /**
   * The last turn's outcome; `open` when it has no `turn/end` (the process died mid-turn);
   * `suspended` when it waits for an approval (`dsh resume ID` asks it); `none` without turns.
   */
  lastOutcome: string;
}

export function summarizeSession(events: readonly LogEvent[]): SessionSummary {
  let turns = 0;
  let last = 'none';
  for (const e of events) {
    if (e.type === 'turn/start') {
      turns++;
      last = 'open';
    } else if (e.type === 'turn/end') last = e.outcome;
  }
  if (last === 'open' && findPendingSuspension(events)) last = 'suspended';
  return { ...(events[0] ? { start: events[0].time } : {}), turns, lastOutcome: last };
}
