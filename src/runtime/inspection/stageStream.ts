/**
 * A runtime's stage stream: who hears it (every call, the calls of one turn, one lone call) and the
 * reports the pipeline makes as it runs each stage. Inspection is an input of the pipeline, as
 * durability and spilling are (pipeline/callStages.ts hands each stage's work to the report of that
 * stage), never a wrapper around its port: the toolCall machine calls one port function per stage
 * (prepare = validating, preExecute, requestApproval = awaitingApproval, guard, execute = executing,
 * postExecute, finalize = finalizing), so the reports see every stage a call enters, synchronous
 * ones included.
 *
 * A stage is exited when its work answers (validating, preExecute, guard, postExecute,
 * finalizing), when its answer is recorded (awaitingApproval: the `tool/approval-answer` the
 * machine records), or when the call moves on (executing: at the next stage, with the body's
 * settlement). A stage still open when the call is finalized (a cancel) exits first, `cancelled`.
 *
 * While no one listens each report only runs the stage's work: an unheard call keeps no stage
 * bookkeeping (one that started unheard is adopted from its view at its next stage once someone
 * listens). Per-call bookkeeping is held in WeakMaps keyed by the request and the prepared call,
 * so nothing is kept for calls that are gone. Browser-safe.
 */
import type { CallView, CallWhere, GuardOutcome, PostExecuteOutcome, PostExecutePlan, PreExecuteOutcome, PreparedCall, PrepareOutcome, ResultDraft, Settlement, StageMarks, SyncOrAsync } from '../../../machines/callStages.js';
import { describeThrown, ErrorCode, type NewLogEvent, type ToolCallRequest, type ToolResult } from '../../protocol/index.js';
import type { Clock } from '../clock.js';
import type { CallStageEvent, CallStageName, StageEventCall, StageExitedEvent, StageListener, StageOutcome } from './stageEvents.js';

/** What the pipeline tells the stream, one report per stage: each runs the stage's work (`run`) and reports it while anyone listens. */
export interface StageReports {
  validating(request: ToolCallRequest, where: CallWhere, run: (request: ToolCallRequest, where: CallWhere) => PrepareOutcome): PrepareOutcome;
  preExecute(call: PreparedCall, run: (call: PreparedCall) => SyncOrAsync<PreExecuteOutcome>): SyncOrAsync<PreExecuteOutcome>;
  /** The call starts waiting for an answer (the stage ends when its answer is `recorded`). */
  awaitingApproval(call: PreparedCall): void;
  guard(call: PreparedCall, run: (call: PreparedCall) => GuardOutcome): GuardOutcome;
  /** The body is about to run (the stage ends when the call moves on). */
  executing(call: PreparedCall): void;
  postExecute(
    call: PreparedCall,
    draft: ResultDraft,
    plan: PostExecutePlan,
    run: (call: PreparedCall, draft: ResultDraft, plan: PostExecutePlan) => SyncOrAsync<PostExecuteOutcome>,
  ): SyncOrAsync<PostExecuteOutcome>;
  finalizing(
    request: ToolCallRequest,
    call: PreparedCall | undefined,
    settlement: Settlement,
    marks: StageMarks | undefined,
    run: (request: ToolCallRequest, call: PreparedCall | undefined, settlement: Settlement, marks: StageMarks | undefined) => ToolResult,
  ): ToolResult;
  /** A log event the machine recorded: a `tool/approval-answer` ends its call's wait. */
  recorded(event: NewLogEvent): void;
}

/** A runtime's stage stream: the pipeline's reports, and who hears them. */
export interface StageStream extends StageReports {
  /** Hears every call's stages; returns the remover. */
  on(listener: StageListener): () => void;
  /** Hears the stages of the calls of one turn; returns the remover. */
  onTurn(turnId: string, listener: StageListener): () => void;
  /**
   * Hears the stages of the call that `request` starts next (a lone call's `onStage`: given just
   * before its validation); returns the remover, to call once the call has settled.
   */
  onCall(request: ToolCallRequest, listener: StageListener): () => void;
}

interface OpenStage {
  readonly stage: CallStageName;
  readonly at: number;
}

interface Track {
  readonly call: StageEventCall;
  /** The lone call's own listeners (`onCall`), when it has any. */
  readonly listeners: readonly StageListener[] | undefined;
  open: OpenStage | undefined;
}

/** Which call an event is about, from its view (or, at validation, its request and where it runs). */
const callOf = (view: Pick<CallView, 'callId' | 'toolName' | 'index' | 'turnId' | 'stepIndex'>): StageEventCall => ({
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
 * A stage stream on `clock`'s time. A listener that throws is recorded as a `STAGE_LISTENER_FAILED`
 * warning through `record` (the session log's append) and kept; the call never sees it.
 */
export function createStageStream(at: { clock: Clock; record: (event: NewLogEvent) => void }): StageStream {
  const all = new Set<StageListener>();
  const byTurn = new Map<string, Set<StageListener>>();
  // A lone call's listeners, until its validation takes them into its track.
  const lone = new WeakMap<ToolCallRequest, StageListener[]>();
  let lones = 0;
  const listening = () => all.size > 0 || byTurn.size > 0 || lones > 0;

  const byRequest = new WeakMap<ToolCallRequest, Track>();
  const byPrepared = new WeakMap<PreparedCall, Track>();
  // Calls waiting for an answer, by where their `tool/approval-answer` will say they are.
  const awaiting = new Map<string, Track>();

  const call = (listener: StageListener, event: CallStageEvent) => {
    try {
      listener(event);
    } catch (e) {
      // A listener's failure never reaches the call; it is recorded, not lost.
      at.record({
        type: 'warning',
        turnId: event.turnId,
        stepIndex: event.stepIndex,
        callId: event.callId,
        code: 'STAGE_LISTENER_FAILED',
        message: `a stage listener threw on ${event.type} ${event.stage}: ${describeThrown(e)}`,
      });
    }
  };
  const emit = (t: Track, event: CallStageEvent) => {
    for (const l of [...all]) call(l, event);
    const turn = event.turnId === undefined ? undefined : byTurn.get(event.turnId);
    if (turn) for (const l of [...turn]) call(l, event);
    if (t.listeners) for (const l of t.listeners) call(l, event);
  };

  const enter = (t: Track, stage: CallStageName, settlement?: Settlement): OpenStage => {
    if (t.open) exit(t, t.open, movedOn(t.open.stage, settlement));
    const open = { stage, at: at.clock.now() };
    t.open = open;
    emit(t, { type: 'stage/entered', ...t.call, stage, at: open.at });
    return open;
  };
  const exit = (t: Track, open: OpenStage, outcome: StageOutcome): void => {
    if (t.open !== open) return; // already left (a cancel moved the call on)
    t.open = undefined;
    if (open.stage === 'awaitingApproval') awaiting.delete(approvalKey(t.call));
    const now = at.clock.now();
    emit(t, { type: 'stage/exited', ...t.call, stage: open.stage, at: now, enteredAt: open.at, durationMs: now - open.at, outcome } as StageExitedEvent);
  };
  /** The track of a prepared call; a call prepared before anyone listened is adopted from its view. */
  const track = (p: PreparedCall): Track => {
    let t = byPrepared.get(p);
    if (!t) {
      t = { call: callOf(p.view), listeners: undefined, open: undefined };
      byPrepared.set(p, t);
    }
    return t;
  };
  /** Runs a listener stage whose outcome may come later. */
  const listenerStage = <O>(t: Track, stage: 'preExecute' | 'postExecute', run: () => SyncOrAsync<O>, outcome: (o: O) => StageOutcome): SyncOrAsync<O> => {
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

  return {
    on(listener) {
      all.add(listener);
      return () => {
        all.delete(listener);
      };
    },
    onTurn(turnId, listener) {
      let set = byTurn.get(turnId);
      if (!set) byTurn.set(turnId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0 && byTurn.get(turnId) === set) byTurn.delete(turnId);
      };
    },
    onCall(request, listener) {
      // The call `request` starts next takes the listener at its validation: a second call of the
      // same request object is not heard by the first one's listener.
      lone.set(request, [...(lone.get(request) ?? []), listener]);
      lones++;
      let heard = true;
      return () => {
        if (heard) lones--;
        heard = false;
      };
    },

    validating(request, where, run) {
      if (!listening()) return run(request, where);
      const t: Track = {
        call: callOf({ callId: request.callId, toolName: request.toolName, index: where.index, turnId: where.turnId, stepIndex: where.stepIndex }),
        listeners: lone.get(request),
        open: undefined,
      };
      lone.delete(request);
      byRequest.set(request, t);
      const open = enter(t, 'validating');
      let o: PrepareOutcome;
      try {
        o = run(request, where);
      } catch (e) {
        exit(t, open, { kind: 'invalid', code: ErrorCode.TOOL_FAILED, message: describeThrown(e) });
        throw e;
      }
      if (o.ok) byPrepared.set(o.prepared, t);
      exit(t, open, prepareOutcome(o));
      return o;
    },
    preExecute: (p, run) => (listening() ? listenerStage(track(p), 'preExecute', () => run(p), preOutcome) : run(p)),
    awaitingApproval(p) {
      if (!listening()) return;
      const t = track(p);
      enter(t, 'awaitingApproval');
      awaiting.set(approvalKey(t.call), t);
    },
    guard(p, run) {
      if (!listening()) return run(p);
      const t = track(p);
      const open = enter(t, 'guard');
      const o = run(p);
      exit(t, open, guardOutcome(o));
      return o;
    },
    executing(p) {
      if (listening()) enter(track(p), 'executing');
    },
    postExecute: (p, draft, plan, run) => (listening() ? listenerStage(track(p), 'postExecute', () => run(p, draft, plan), postOutcome) : run(p, draft, plan)),
    finalizing(request, p, settlement, marks, run) {
      if (!listening()) return run(request, p, settlement, marks);
      const t = (p && byPrepared.get(p)) ?? byRequest.get(request) ?? (p ? track(p) : undefined);
      const open = t && enter(t, 'finalizing', settlement);
      let r: ToolResult;
      try {
        r = run(request, p, settlement, marks);
      } catch (e) {
        if (t && open) exit(t, open, { kind: 'error', code: ErrorCode.TOOL_FAILED, message: describeThrown(e) });
        throw e;
      }
      if (t && open) exit(t, open, resultOutcome(r));
      return r;
    },
    recorded(event) {
      if (event.type !== 'tool/approval-answer' || !listening()) return;
      const t = awaiting.get(approvalKey(event));
      const outcome = approvalOutcome(event.answer);
      if (t?.open?.stage === 'awaitingApproval' && outcome) exit(t, t.open, outcome);
    },
  };
}
