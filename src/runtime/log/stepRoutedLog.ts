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
 * It keeps only what is open (turns, steps) and a short memory of recently closed steps, so a
 * long-lived session does not grow per turn. Browser-safe.
 */
import type { LogEvent, NewLogEvent } from '../../protocol/index.js';
import type { SessionLog } from './sessionLog.js';

/** The warning code that replaces an event which arrived after its step was closed. */
export const LATE_EVENT_DISCARDED = 'LATE_EVENT_DISCARDED';

/** How many closed / never-seen steps the view remembers before it looks in the log again. */
const MEMORY = 64;

/** A view of `log` whose `append` routes events of closed steps (see the file comment). */
export function createStepRoutedLog(log: SessionLog): SessionLog {
  const openTurns = new Set<string>();
  const openSteps = new Map<string, Set<number>>();
  /** `turnId\0stepIndex` → true when that step has ended, false when the log holds no such step. */
  const known = new Map<string, boolean>();
  const remember = (key: string, closed: boolean) => {
    known.delete(key);
    known.set(key, closed);
    if (known.size > MEMORY) known.delete(known.keys().next().value!);
  };
  const key = (turnId: string, stepIndex: number) => `${turnId}\u0000${stepIndex}`;

  const track = (e: LogEvent) => {
    switch (e.type) {
      case 'turn/start':
        openTurns.add(e.turnId);
        break;
      case 'turn/end':
        openTurns.delete(e.turnId);
        break;
      case 'step/start': {
        let steps = openSteps.get(e.turnId);
        if (!steps) openSteps.set(e.turnId, (steps = new Set()));
        steps.add(e.stepIndex);
        known.delete(key(e.turnId, e.stepIndex));
        break;
      }
      case 'step/end': {
        const steps = openSteps.get(e.turnId);
        steps?.delete(e.stepIndex);
        if (steps?.size === 0) openSteps.delete(e.turnId);
        remember(key(e.turnId, e.stepIndex), true);
        break;
      }
      default:
        break;
    }
  };
  // What is open now comes from the log's index (no scan of the log); then the view keeps track.
  const index = log.index;
  for (const turnId of index.openTurns()) openTurns.add(turnId);
  for (const [turnId, stepIndex] of index.openSteps()) {
    let steps = openSteps.get(turnId);
    if (!steps) openSteps.set(turnId, (steps = new Set()));
    steps.add(stepIndex);
  }
  log.subscribe(track);

  /** True when the log shows this step ended (it is not open): a backwards look, then remembered. */
  const hasEnded = (turnId: string, stepIndex: number): boolean => {
    const k = key(turnId, stepIndex);
    const memo = known.get(k);
    if (memo !== undefined) return memo;
    let ended = false;
    for (let seq = log.lastSeq; seq >= (log.firstSeq ?? 1); seq--) {
      const e = log.get(seq);
      if (!e || (e.type !== 'step/end' && e.type !== 'step/start') || e.turnId !== turnId || e.stepIndex !== stepIndex) continue;
      ended = e.type === 'step/end';
      break;
    }
    remember(k, ended);
    return ended;
  };

  const isLate = (event: NewLogEvent): event is NewLogEvent & { turnId: string; stepIndex: number } => {
    if (event.type === 'step/start' || event.type === 'turn/start' || event.type === 'turn/end') return false;
    const turnId = 'turnId' in event ? event.turnId : undefined;
    const stepIndex = 'stepIndex' in event ? event.stepIndex : undefined;
    if (turnId === undefined || stepIndex === undefined) return false;
    if (openSteps.get(turnId)?.has(stepIndex)) return false;
    return hasEnded(turnId, stepIndex);
  };

  const view: SessionLog = {
    append(event) {
      if (!isLate(event)) return log.append(event);
      const callId = 'callId' in event && typeof event.callId === 'string' ? event.callId : undefined;
      return log.append({
        type: 'warning',
        ...(openTurns.has(event.turnId) ? { turnId: event.turnId } : {}),
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
