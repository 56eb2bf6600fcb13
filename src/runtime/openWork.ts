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
import type { OpenWorkScope } from './log/sessionIndex.js';

export type { OpenWorkScope } from './log/sessionIndex.js';

/** Characters of a call's last output an INTERRUPTED result quotes. */
export const INTERRUPTED_OUTPUT_CHARS = 500;

/**
 * What the last `tool/progress` events of each open call said (SPEC §9.1): its status and the tail
 * of the output it reported, for its INTERRUPTED result. One backward pass over the log, down to
 * the oldest open call.
 */
function lastProgress(log: SessionLog, calls: readonly { callId: string; seq: number }[]): Map<string, string> {
  const out = new Map<string, string>();
  if (calls.length === 0) return out;
  const open = new Map(calls.map((c) => [c.callId, c.seq]));
  const oldest = Math.min(...calls.map((c) => c.seq));
  const found = new Map<string, { seq: number; status?: string; output: string; more: boolean }>();
  const events = log.events();
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.seq < oldest) break;
    if (e.type !== 'tool/progress' || !open.has(e.callId) || e.seq < open.get(e.callId)!) continue;
    let f = found.get(e.callId);
    if (!f) {
      const status = [e.progress !== undefined ? `${e.progress}${e.total !== undefined ? `/${e.total}` : ''}` : '', e.message ?? ''].filter(Boolean).join(' ');
      f = { seq: e.seq, ...(status ? { status } : {}), output: '', more: false };
      found.set(e.callId, f);
    }
    if (e.output !== undefined) {
      if (f.output.length < INTERRUPTED_OUTPUT_CHARS) f.output = e.output + f.output;
      else f.more = true;
    }
    if (e.droppedChars) f.more = true;
  }
  for (const [callId, f] of found) {
    const cut = f.more || f.output.length > INTERRUPTED_OUTPUT_CHARS;
    const tail = f.output.slice(-INTERRUPTED_OUTPUT_CHARS);
    const parts = [f.status ? `its last progress: ${f.status}` : '', tail ? `the last output it reported${cut ? ' (its tail)' : ''}: ${JSON.stringify(tail)}` : ''].filter(Boolean);
    out.set(callId, `${parts.join('; ') || 'it had reported progress'} (tool/progress #${f.seq})`);
  }
  return out;
}

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
  const index = log.index;
  const suspended = scope.turnId === undefined && index.sawSuspension ? pendingSuspensionOf(log)?.turnId : undefined;
  const all = index.openWork(scope);
  const keep = <T extends { turnId?: string }>(list: readonly T[]) => (suspended === undefined ? list : list.filter((w) => w.turnId !== suspended));
  const open = { calls: keep(all.calls), steps: keep(all.steps), turns: keep(all.turns) };
  const done: ClosedWork = { calls: 0, steps: 0, turns: 0 };

  const progress = lastProgress(log, open.calls);
  for (const call of open.calls) {
    const seen = progress.get(call.callId);
    log.append({
      type: 'tool/result',
      turnId: call.turnId,
      stepIndex: call.stepIndex,
      callId: call.callId,
      toolName: call.toolName,
      sourceEventSeqs: [call.seq],
      result: errorResult(call, { code: ErrorCode.INTERRUPTED, message: `${why}; the call's outcome is unknown${seen ? `; ${seen}` : ''}` }),
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
