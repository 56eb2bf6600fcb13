/**
 * Keeps every step's events inside the step (SPEC §8.11, §8.13). A step whose actor crashed is
 * closed by its turn (`INTERRUPTED` results, `step/end`) while its calls may still be running, and
 * whatever they log afterwards (results, `hook/failed`, `tool/spilled`, approval events, warnings)
 * would land after the step was closed, often after its `turn/end`. The runtime hands the call
 * pipeline, the spill policy and the turns this view of the log instead of the log itself: an event
 * for a step that has ended is not appended; one `LATE_EVENT_DISCARDED` warning is, holding the
 * dropped event whole in `data.event` (nothing is lost), attached to the turn while the turn is
 * open, else to the session (no `turnId`), so nothing lands in a closed turn either.
 *
 * Which turns and steps are open it reads from the log's index; of its own it keeps only a short
 * memory of steps it found not open, so a long-lived session does not grow per turn. Browser-safe.
 */
import type { NewLogEvent } from '../../protocol/index.js';
import { stepKey } from './sessionIndex.js';
import type { SessionLog } from './sessionLog.js';

/** The warning code that replaces an event which arrived after its step was closed. */
export const LATE_EVENT_DISCARDED = 'LATE_EVENT_DISCARDED';

/** How many closed / never-seen steps the view remembers before it looks in the log again. */
const MEMORY = 64;

/** A view of `log` whose `append` routes events of closed steps (see the file comment). */
export function createStepRoutedLog(log: SessionLog): SessionLog {
  // What is open is the log's index's to know (sessionIndex.ts); the view only remembers, for a
  // step that is not open, whether the log showed it ended, and up to which `seq` it looked.
  const index = log.index;
  const known = new Map<string, { ended: boolean; upTo: number }>();

  /** True when the log shows this step ended: a backwards look over what it has not seen yet, then remembered. */
  const hasEnded = (turnId: string, stepIndex: number): boolean => {
    const k = stepKey(turnId, stepIndex);
    const memo = known.get(k);
    if (memo?.ended) return true;
    let ended = false;
    const from = Math.max(memo ? memo.upTo + 1 : 1, log.firstSeq ?? 1);
    for (let seq = log.lastSeq; seq >= from; seq--) {
      const e = log.get(seq);
      if (!e || (e.type !== 'step/end' && e.type !== 'step/start') || e.turnId !== turnId || e.stepIndex !== stepIndex) continue;
      ended = e.type === 'step/end';
      break;
    }
    known.delete(k);
    known.set(k, { ended, upTo: log.lastSeq });
    if (known.size > MEMORY) known.delete(known.keys().next().value!);
    return ended;
  };

  const isLate = (event: NewLogEvent): event is NewLogEvent & { turnId: string; stepIndex: number } => {
    if (event.type === 'step/start' || event.type === 'turn/start' || event.type === 'turn/end') return false;
    const turnId = 'turnId' in event ? event.turnId : undefined;
    const stepIndex = 'stepIndex' in event ? event.stepIndex : undefined;
    if (turnId === undefined || stepIndex === undefined) return false;
    if (index.isStepOpen(turnId, stepIndex)) return false;
    return hasEnded(turnId, stepIndex);
  };

  const view: SessionLog = {
    append(event) {
      if (!isLate(event)) return log.append(event);
      const callId = 'callId' in event && typeof event.callId === 'string' ? event.callId : undefined;
      return log.append({
        type: 'warning',
        ...(index.isTurnOpen(event.turnId) ? { turnId: event.turnId } : {}),
        ...(callId !== undefined ? { callId } : {}),
        code: LATE_EVENT_DISCARDED,
        message: `a ${event.type} event for step ${event.stepIndex} of ${event.turnId} arrived after that step was closed; it was discarded (kept in data.event)`,
        data: { event },
      }) as never;
    },
    events: (range) => log.events(range),
    get: (seq) => log.get(seq),
    get lastSeq() {
      return log.lastSeq;
    },
    subscribe: (listener) => log.subscribe(listener),
    // A view shares its log's index: its appends reach the index through that log.
    get index() {
      return log.index;
    },
    ...(log.firstSeq !== undefined ? { firstSeq: log.firstSeq } : {}),
    ...(log.whenDurable ? { whenDurable: log.whenDurable } : {}),
  };
  return view;
}
