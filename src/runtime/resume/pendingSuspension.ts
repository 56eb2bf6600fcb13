/**
 * Which suspended turn a session log still waits on, read from the log alone (nothing crosses the
 * process boundary). A turn is *pending* from its `turn/suspended` event until one of its suspended
 * calls gets a `tool/approval-answer` (from then on the resume is under way: a crash afterwards is
 * an ordinary crash, closed `INTERRUPTED` on the next resume) or the turn ends. Browser-safe.
 */
import type { LogEvent, LogEventOf } from '../../protocol/index.js';
import type { SessionLog } from '../log/sessionLog.js';

/** One call the suspended step still owes a result: waiting for approval, held, or not started. */
export interface SuspendedStepCall {
  readonly call: LogEventOf<'tool/call'>;
  /** The call waits for its approval (its `tool/approval-request`, when found). */
  readonly awaiting?: { readonly request: LogEventOf<'tool/approval-request'> | undefined };
  /** The call already settled before the suspension: this result is committed, not run again. */
  readonly held?: LogEventOf<'turn/suspended'>['held'][number]['result'];
}

/** A suspended turn the log still waits on: its `turn/suspended` event and the step's pending calls. */
export interface PendingSuspension {
  readonly event: LogEventOf<'turn/suspended'>;
  readonly turnId: string;
  readonly stepIndex: number;
  /** The `turn/start` of the suspended turn (its input). */
  readonly turnStart: LogEventOf<'turn/start'> | undefined;
  /** The suspended step's `step/start`. */
  readonly stepStart?: LogEventOf<'step/start'>;
  /** The step's calls without a `tool/result`, in the model's order (by `index`). */
  readonly open: readonly SuspendedStepCall[];
  /** How many calls the step logged in all (its `step/end` counts them). */
  readonly stepCalls: number;
  /** The pending approvals: tool, input, reason, as the log has them. */
  readonly approvals: ReadonlyArray<{ callId: string; toolName: string; input: unknown; reason?: string }>;
}

/** The suspended turn the log still waits on, or undefined. */
export function findPendingSuspension(events: readonly LogEvent[]): PendingSuspension | undefined {
  let at = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.type === 'turn/suspended') {
      at = i;
      break;
    }
  }
  if (at < 0) return undefined;
  const event = events[at] as LogEventOf<'turn/suspended'>;
  const { turnId, stepIndex } = event;
  const waiting = new Set(event.calls.map((c) => c.callId));
  for (let i = at + 1; i < events.length; i++) {
    const e = events[i]!;
    if (e.type === 'turn/end' && e.turnId === turnId) return undefined;
    if (e.type === 'tool/approval-answer' && e.turnId === turnId && e.stepIndex === stepIndex && waiting.has(e.callId)) return undefined;
  }
  const inStep = (e: LogEvent) => 'turnId' in e && e.turnId === turnId && 'stepIndex' in e && e.stepIndex === stepIndex;
  const answered = new Set<number>();
  const calls: Array<LogEventOf<'tool/call'>> = [];
  const requests = new Map<string, LogEventOf<'tool/approval-request'>>();
  let turnStart: LogEventOf<'turn/start'> | undefined;
  let stepStart: LogEventOf<'step/start'> | undefined;
  for (const e of events) {
    if (e.type === 'turn/start' && e.turnId === turnId) turnStart = e;
    if (!inStep(e)) continue;
    if (e.type === 'step/start') stepStart ??= e;
    else if (e.type === 'tool/call') calls.push(e);
    else if (e.type === 'tool/result') for (const s of e.sourceEventSeqs) answered.add(s);
    else if (e.type === 'tool/approval-request' && waiting.has(e.callId)) requests.set(e.callId, e);
  }
  const held = new Map(event.held.map((h) => [h.callSeq, h.result]));
  const awaitingSeqs = new Set(event.calls.map((c) => c.callSeq));
  const open: SuspendedStepCall[] = calls
    .filter((c) => !answered.has(c.seq))
    .sort((a, b) => a.index - b.index)
    .map((call) => ({
      call,
      ...(awaitingSeqs.has(call.seq) ? { awaiting: { request: requests.get(call.callId) } } : {}),
      ...(held.has(call.seq) ? { held: held.get(call.seq)! } : {}),
    }));
  return {
    event,
    turnId,
    stepIndex,
    turnStart,
    ...(stepStart ? { stepStart } : {}),
    open,
    stepCalls: calls.length,
    approvals: open
      .filter((o) => o.awaiting)
      .map((o) => ({
        callId: o.call.callId,
        toolName: o.call.toolName,
        input: o.call.input,
        ...(o.awaiting!.request?.reason !== undefined ? { reason: o.awaiting!.request.reason } : {}),
      })),
  };
}

/**
 * The suspended turn `log` still waits on, or undefined: `findPendingSuspension` over the whole
 * session. A log resumed from a checkpoint holds only the events after it (`log.firstSeq`); the
 * events of a suspension from before it come from the checkpoint (`SessionIndex.suspension`).
 * Looked for only when the session's index saw a `turn/suspended`.
 */
export function pendingSuspensionOf(log: SessionLog): PendingSuspension | undefined {
  const index = log.index;
  if (!index.sawSuspension) return undefined;
  const first = log.firstSeq ?? 1;
  const before = index.suspension.filter((e) => e.seq < first);
  return findPendingSuspension(before.length ? [...before, ...log.events()] : log.events());
}

/**
 * The events of `log` a pending suspension is read from (its `turn/start`, the suspended step's
 * events, its `turn/suspended`), for a checkpoint to carry; [] when none is pending.
 */
export function pendingSuspensionEvents(log: SessionLog): LogEvent[] {
  const pending = pendingSuspensionOf(log);
  if (!pending) return [];
  const { turnId, stepIndex } = pending;
  const first = log.firstSeq ?? 1;
  const all = [...log.index.suspension.filter((e) => e.seq < first), ...log.events()];
  return all.filter(
    (e) =>
      e === pending.event ||
      (e.type === 'turn/start' && e.turnId === turnId) ||
      ((e.type === 'step/start' || e.type === 'tool/call' || e.type === 'tool/result' || e.type === 'tool/approval-request') && e.turnId === turnId && e.stepIndex === stepIndex),
  );
}
