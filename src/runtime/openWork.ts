/**
 * Closing what the log left open. A `tool/call` promises a `tool/result`, a `step/start` a
 * `step/end`, a `turn/start` a `turn/end`. When a step crashed, or the process died mid-turn and
 * the session is resumed from its log, those promises are kept here: unanswered calls get an
 * `INTERRUPTED` result, open steps and turns are closed, so the log (and the model's view of it)
 * is well-formed again. A turn suspended on its approvals (`turn/suspended`, still pending) is not
 * open work but waiting work: an unscoped close leaves it alone, to be resumed. Pure over the log:
 * browser-safe.
 */
import { ErrorCode, errorResult } from '../protocol/index.js';
import type { SessionLog } from './log/sessionLog.js';
import { pendingSuspensionOf } from './resume/pendingSuspension.js';
import { sessionIndexOf, type OpenWorkScope } from './log/sessionIndex.js';

export type { OpenWorkScope } from './log/sessionIndex.js';

/** How many calls, steps and turns a close of open work paired or ended. */
export interface ClosedWork {
  calls: number;
  steps: number;
  turns: number;
}

/**
 * Appends what closes the open calls, steps and turns in `scope`, innermost first, each stating
 * `why`. Returns how many of each it closed (all zero for a well-formed log). What is open comes
 * from the log's index (log/sessionIndex.ts), not from a scan of the log.
 */
export function closeOpenWork(log: SessionLog, why: string, scope: OpenWorkScope = {}, closeTurns = true): ClosedWork {
  // A pending suspension is kept for resumeTurn; a crash after its answer was logged is an ordinary
  // crash. (Looked for only in an unscoped close, i.e. on resume, and only if the index saw one.)
  const index = sessionIndexOf(log);
  const suspended = scope.turnId === undefined && index.sawSuspension ? pendingSuspensionOf(log)?.turnId : undefined;
  const all = index.openWork(scope);
  const keep = <T extends { turnId?: string }>(list: readonly T[]) => (suspended === undefined ? list : list.filter((w) => w.turnId !== suspended));
  const open = { calls: keep(all.calls), steps: keep(all.steps), turns: keep(all.turns) };
  const done: ClosedWork = { calls: 0, steps: 0, turns: 0 };

  for (const call of open.calls) {
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
  for (const step of open.steps) {
    log.append({ type: 'step/end', turnId: step.turnId, stepIndex: step.stepIndex, finishReason: 'error', toolCalls: step.toolCalls });
    done.steps++;
  }
  if (closeTurns) {
    for (const turn of open.turns) {
      log.append({ type: 'turn/end', turnId: turn.turnId, outcome: 'failed', steps: turn.steps, error: why });
      done.turns++;
    }
  }
  return done;
}
