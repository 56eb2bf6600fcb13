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
  /** The session's first prompt, as one line (its title). */
  title?: string;
}

/** A prompt as a title: one line, at most `max` characters. */
export function titleOf(input: string, max = 60): string {
  const one = input.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

export function summarizeSession(events: readonly LogEvent[]): SessionSummary {
  let turns = 0;
  let last = 'none';
  let title: string | undefined;
  for (const e of events) {
    if (e.type === 'turn/start') {
      title ??= titleOf(e.input);
      turns++;
      last = 'open';
    } else if (e.type === 'turn/end') last = e.outcome;
  }
  if (last === 'open' && findPendingSuspension(events)) last = 'suspended';
  return { ...(events[0] ? { start: events[0].time } : {}), turns, lastOutcome: last, ...(title !== undefined ? { title } : {}) };
}
