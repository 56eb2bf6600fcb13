/**
 * The stage stream, read at the `CallStages` port: the toolCall machine calls one port function
 * per stage (prepare = validating, preExecute, requestApproval = awaitingApproval, guard,
 * execute = executing, postExecute, finalize = finalizing), so wrapping the port sees every stage
 * a call enters, synchronous ones included, without depending on the machine's internal states.
 *
 * A stage is exited when its port function answers (validating, preExecute, guard, postExecute,
 * finalizing), when its answer is recorded (awaitingApproval: the `tool/approval-answer` the
 * machine records), or when the call moves on (executing: at the next stage, with the body's
 * settlement). A stage still open when the call is finalized (a cancel) exits first, `cancelled`.
 *
 * Per-call bookkeeping is held in WeakMaps keyed by the request and the prepared call, so nothing
 * is kept for calls that are gone. Browser-safe.
 */
import type { CallStages, CallView, PostExecuteOutcome, PreExecuteOutcome, PreparedCall, PrepareOutcome, Settlement, GuardOutcome } from '../../../machines/callStages.js';
import { describeThrown, ErrorCode, type NewLogEvent, type ToolCallRequest, type ToolResult } from '../../protocol/index.js';
import type { CallStageEvent, CallStageName, StageEventCall, StageExitedEvent, StageOutcome } from './stageEvents.js';

interface OpenStage {
  readonly stage: CallStageName;
  readonly at: number;
}

interface Track {
  readonly call: StageEventCall;
  open: OpenStage | undefined;
}

const callOf = (view: CallView): StageEventCall => ({
  callId: view.callId,
  toolName: view.toolName,
  index: view.index,
  ...(view.turnId !== undefined ? { turnId: view.turnId } : {}),
  ...(view.stepIndex !== undefined ? { stepIndex: view.stepIndex } : {}),
});

const errorOf = (s: Settlement | undefined): Pick<StageOutcome, 'code' | 'message'> =>
  s && !s.ok ? { code: s.error.code, message: s.error.message } : {};

function prepareOutcome(o: PrepareOutcome): StageOutcome<'validating'> {
  if (o.ok) return { kind: 'valid' };
  return { kind: 'invalid', code: o.error.code, message: o.error.message, ...(o.hookFailure ? { listener: o.hookFailure.listener } : {}) };
}

function preOutcome(o: PreExecuteOutcome): StageOutcome<'preExecute'> {
  switch (o.kind) {
    case 'allow':
      return { kind: 'allow' };
    case 'ask':
      return o.reason !== undefined ? { kind: 'ask', message: o.reason } : { kind: 'ask' };
    case 'deny':
      return { kind: 'deny', code: ErrorCode.POLICY_DENIED, message: o.reason, ...(o.by !== undefined ? { listener: o.by } : {}) };
    case 'failed':
      return { kind: 'failed', code: ErrorCode.HOOK_FAILED, message: o.message, listener: o.listener };
  }
}

function guardOutcome(o: GuardOutcome): StageOutcome<'guard'> {
  if (o === undefined) return { kind: 'pass' };
  if (o.kind === 'deny') return { kind: 'deny', code: ErrorCode.GUARD_DENIED, message: o.reason, listener: o.listener };
  return { kind: 'failed', code: ErrorCode.HOOK_FAILED, message: o.message, listener: o.listener };
}

function postOutcome(o: PostExecuteOutcome): StageOutcome<'postExecute'> {
  switch (o.kind) {
    case 'accepted':
      return { kind: 'accepted' };
    case 'blocked':
      return { kind: 'blocked', code: ErrorCode.POST_EXECUTE_BLOCKED, message: o.feedback, listener: o.listener };
    case 'invalid-output':
      return { kind: 'invalid-output', code: ErrorCode.INVALID_OUTPUT, message: o.message };
    case 'failed':
      return { kind: 'failed', code: ErrorCode.HOOK_FAILED, message: o.message, listener: o.listener };
  }
}

function approvalOutcome(answer: string): StageOutcome<'awaitingApproval'> | undefined {
  switch (answer) {
    case 'allowed-once':
    case 'allowed-always':
      return { kind: answer };
    case 'denied':
    case 'timeout':
      return { kind: answer, code: ErrorCode.APPROVAL_DENIED };
    case 'cancelled':
      return { kind: 'cancelled' };
    default:
      return undefined; // `remembered`: the call never waited
  }
}

const resultOutcome = (r: ToolResult): StageOutcome<'finalizing'> =>
  r.error ? { kind: 'error', code: r.error.code, message: r.error.message } : { kind: 'ok' };

/** How a stage still open when the call moves on (or is finalized with `settlement`) ended. */
function movedOn(stage: CallStageName, settlement: Settlement | undefined): StageOutcome {
  const error = errorOf(settlement);
  switch (stage) {
    case 'executing':
      return { kind: settlement && !settlement.ok ? 'error' : 'ok', ...error };
    case 'validating':
      return { kind: 'valid' };
    case 'guard':
      return { kind: 'pass' };
    case 'finalizing':
      return { kind: settlement && !settlement.ok ? 'error' : 'ok', ...error };
    default:
      return { kind: 'cancelled', ...error };
  }
}

const approvalKey = (e: { turnId?: string; stepIndex?: number; callId: string }) => `${e.turnId ?? ''}\u0000${e.stepIndex ?? ''}\u0000${e.callId}`;

/**
 * The port `inner`, with every stage a call enters and exits reported to `emit` (synchronously, in
 * order) while `listening()` holds; otherwise each member is `inner`'s own, with no bookkeeping (a
 * call that started unheard is adopted from its view at its next stage once someone listens).
 */
export function observeStages(inner: CallStages, emit: (event: CallStageEvent) => void, listening: () => boolean = () => true): CallStages {
  const byRequest = new WeakMap<ToolCallRequest, Track>();
  const byPrepared = new WeakMap<PreparedCall, Track>();
  // Calls waiting for an answer, by where their `tool/approval-answer` will say they are.
  const awaiting = new Map<string, Track>();

  const enter = (t: Track, stage: CallStageName, settlement?: Settlement): OpenStage => {
    if (t.open) exit(t, t.open, movedOn(t.open.stage, settlement));
    const open = { stage, at: inner.now() };
    t.open = open;
    emit({ type: 'stage/entered', ...t.call, stage, at: open.at });
    return open;
  };
  const exit = (t: Track, open: OpenStage, outcome: StageOutcome): void => {
    if (t.open !== open) return; // already left (a cancel moved the call on)
    t.open = undefined;
    if (open.stage === 'awaitingApproval') awaiting.delete(approvalKey(t.call));
    const at = inner.now();
    emit({ type: 'stage/exited', ...t.call, stage: open.stage, at, enteredAt: open.at, durationMs: at - open.at, outcome } as StageExitedEvent);
  };
  /** The track of a prepared call; a call prepared before anyone listened is adopted from its view. */
  const track = (p: PreparedCall): Track => {
    let t = byPrepared.get(p);
    if (!t) {
      t = { call: callOf(p.view), open: undefined };
      byPrepared.set(p, t);
    }
    return t;
  };
  /** Runs a listener stage whose outcome may come later. */
  const listenerStage = <O>(t: Track, stage: 'preExecute' | 'postExecute', run: () => O | Promise<O>, outcome: (o: O) => StageOutcome): O | Promise<O> => {
    const open = enter(t, stage);
    const o = run();
    if (!(o instanceof Promise)) {
      exit(t, open, outcome(o));
      return o;
    }
    return o.then(
      (v) => {
        exit(t, open, outcome(v));
        return v;
      },
      (e: unknown) => {
        exit(t, open, { kind: 'failed', code: ErrorCode.HOOK_FAILED, message: describeThrown(e) });
        throw e;
      },
    );
  };

  // Every member is written out (no spread of `inner`): a stage added to the port is a type error
  // here until it is observed, never a stage that silently emits nothing.
  const observed: CallStages = {
    get limits() {
      return inner.limits;
    },
    now: () => inner.now(),
    prepare(request, where) {
      if (!listening()) return inner.prepare(request, where);
      const t: Track = {
        call: {
          callId: request.callId,
          toolName: request.toolName,
          index: where.index,
          ...(where.turnId !== undefined ? { turnId: where.turnId } : {}),
          ...(where.stepIndex !== undefined ? { stepIndex: where.stepIndex } : {}),
        },
        open: undefined,
      };
      byRequest.set(request, t);
      const open = enter(t, 'validating');
      let o: PrepareOutcome;
      try {
        o = inner.prepare(request, where);
      } catch (e) {
        exit(t, open, { kind: 'invalid', code: ErrorCode.TOOL_FAILED, message: describeThrown(e) });
        throw e;
      }
      if (o.ok) byPrepared.set(o.prepared, t);
      exit(t, open, prepareOutcome(o));
      return o;
    },
    hasPreExecute: () => inner.hasPreExecute(),
    hasGuards: (p) => inner.hasGuards(p),
    planPostExecute: (p, draft) => inner.planPostExecute(p, draft),
    preExecute: (p) => (listening() ? listenerStage(track(p), 'preExecute', () => inner.preExecute(p), preOutcome) : inner.preExecute(p)),
    isApprovalRemembered: (p) => inner.isApprovalRemembered(p),
    rememberApproval: (p) => inner.rememberApproval(p),
    requestApproval(p, reason, signal, preview) {
      if (!listening()) return inner.requestApproval(p, reason, signal, preview);
      const t = track(p);
      enter(t, 'awaitingApproval');
      awaiting.set(approvalKey(t.call), t);
      return inner.requestApproval(p, reason, signal, preview);
    },
    guard(p) {
      if (!listening()) return inner.guard(p);
      const t = track(p);
      const open = enter(t, 'guard');
      const o = inner.guard(p);
      exit(t, open, guardOutcome(o));
      return o;
    },
    execute(p, signal) {
      if (listening()) enter(track(p), 'executing');
      return inner.execute(p, signal);
    },
    ...(inner.armDeadline ? { armDeadline: (p: PreparedCall, expired: Parameters<NonNullable<CallStages['armDeadline']>>[1]) => inner.armDeadline!(p, expired) } : {}),
    draftFromValue: (p, value) => inner.draftFromValue(p, value),
    postExecute: (p, draft, plan) => (listening() ? listenerStage(track(p), 'postExecute', () => inner.postExecute(p, draft, plan), postOutcome) : inner.postExecute(p, draft, plan)),
    finalize(request, p, settlement, marks) {
      if (!listening()) return inner.finalize(request, p, settlement, marks);
      const t = (p && byPrepared.get(p)) ?? byRequest.get(request) ?? (p ? track(p) : undefined);
      const open = t && enter(t, 'finalizing', settlement);
      let r: ToolResult;
      try {
        r = inner.finalize(request, p, settlement, marks);
      } catch (e) {
        if (t && open) exit(t, open, { kind: 'error', code: ErrorCode.TOOL_FAILED, message: describeThrown(e) });
        throw e;
      }
      if (t && open) exit(t, open, resultOutcome(r));
      return r;
    },
    record(event: NewLogEvent) {
      inner.record(event);
      if (event.type !== 'tool/approval-answer' || !listening()) return;
      const t = awaiting.get(approvalKey(event));
      const outcome = approvalOutcome(event.answer);
      if (t?.open?.stage === 'awaitingApproval' && outcome) exit(t, t.open, outcome);
    },
    isMetered: (p) => inner.isMetered(p),
  };
  return observed;
}
