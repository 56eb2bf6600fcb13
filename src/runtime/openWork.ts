/**
 * Closing what the log left open. A `tool/call` promises a `tool/result`, a `step/start` a
 * `step/end`, a `turn/start` a `turn/end`. When a step crashed, or the process died mid-turn and
 * the session is resumed from its log, those promises are kept here: unanswered calls get an
 * `INTERRUPTED` result, open steps and turns are closed, so the log (and the model's view of it)
 * is well-formed again. A turn suspended on its approvals (`turn/suspended`, still pending) is not
 * open work but waiting work: an unscoped close leaves it alone, to be resumed. Pure over the log:
 * browser-safe.
 */
import { ErrorCode, errorResult, type LogEvent } from '../protocol/index.js';
import type { SessionLog } from './log/sessionLog.js';
import { findPendingSuspension } from './resume/pendingSuspension.js';

export interface OpenWorkScope {
  /** Only this turn (default: every turn). */
  turnId?: string;
  /** Only this step of `turnId`. */
  stepIndex?: number;
}

export interface ClosedWork {
  calls: number;
  steps: number;
  turns: number;
}

const inScope = (e: LogEvent, scope: OpenWorkScope) =>
  (scope.turnId === undefined || ('turnId' in e && e.turnId === scope.turnId)) &&
  (scope.stepIndex === undefined || ('stepIndex' in e && e.stepIndex === scope.stepIndex));

/**
 * Appends what closes the open calls, steps and turns in `scope`, innermost first, each stating
 * `why`. Returns how many of each it closed (all zero for a well-formed log).
 */
export function closeOpenWork(log: SessionLog, why: string, scope: OpenWorkScope = {}, closeTurns = true): ClosedWork {
  const all = log.events();
  // A pending suspension is kept for resumeTurn; a crash after its answer was logged is an ordinary crash.
  const suspended = scope.turnId === undefined ? findPendingSuspension(all)?.turnId : undefined;
  const events = all.filter((e) => inScope(e, scope) && !(suspended !== undefined && 'turnId' in e && e.turnId === suspended));
  const answered = new Set(events.flatMap((e) => (e.type === 'tool/result' ? e.sourceEventSeqs : [])));
  const closedSteps = new Set(events.flatMap((e) => (e.type === 'step/end' ? [`${e.turnId}#${e.stepIndex}`] : [])));
  const closedTurns = new Set(events.flatMap((e) => (e.type === 'turn/end' ? [e.turnId] : [])));
  const done: ClosedWork = { calls: 0, steps: 0, turns: 0 };

  for (const call of events) {
    if (call.type !== 'tool/call' || answered.has(call.seq)) continue;
    log.append({
      type: 'tool/result',
      turnId: call.turnId,
      stepIndex: call.stepIndex,
      callId: call.callId,
      toolName: call.toolName,
      sourceEventSeqs: [call.seq],
      result: errorResult(call, { code: ErrorCode.INTERRUPTED, message: `${why}; the call's outcome is unknown` }),
    });
    done.calls++;
  }
  for (const step of events) {
    if (step.type !== 'step/start' || closedSteps.has(`${step.turnId}#${step.stepIndex}`)) continue;
    const toolCalls = events.filter((e) => e.type === 'tool/call' && e.turnId === step.turnId && e.stepIndex === step.stepIndex).length;
    log.append({ type: 'step/end', turnId: step.turnId, stepIndex: step.stepIndex, finishReason: 'error', toolCalls });
    done.steps++;
  }
  if (closeTurns) {
    for (const turn of events) {
      if (turn.type !== 'turn/start' || closedTurns.has(turn.turnId)) continue;
      const steps = events.filter((e) => e.type === 'step/start' && e.turnId === turn.turnId).length;
      log.append({ type: 'turn/end', turnId: turn.turnId, outcome: 'failed', steps, error: why });
      done.turns++;
    }
  }
  return done;
}
