/**
 * No tool body starts before its `tool/call` is durable (SPEC §1: the call is in the log before it
 * can run; with a log on disk, "in the log" means on disk). The scheduler (and `runCall`) append
 * `tool/call` before the call's actor exists; the execute stage (callStages.ts) first waits until
 * the log is durable up to its last event, which includes that `tool/call`. Only then do the
 * `tools/execute` wrappers and the body run. A crash after a body started thus always leaves its
 * `tool/call` on disk, and resuming closes it as `INTERRUPTED`.
 *
 * Calls reaching the execute stage together share one write+fsync (the sink's group commit). A
 * log that cannot be made durable runs no body: the call settles `ABORTED_BEFORE_DISPATCH`.
 * A log without `whenDurable` (the in-memory log) is durable at once: the body runs without a
 * wait. Browser-safe.
 */
import type { ExecOutcome } from '../../../machines/callStages.js';
import { ErrorCode, errorNameFor } from '../../protocol/index.js';
import type { SessionLog } from '../log/sessionLog.js';

const notDurable = (e: unknown): ExecOutcome => ({
  ok: false,
  error: {
    name: errorNameFor(ErrorCode.ABORTED_BEFORE_DISPATCH),
    code: ErrorCode.ABORTED_BEFORE_DISPATCH,
    message: `the session log could not make this call's tool/call durable, so it did not run: ${e instanceof Error ? e.message : String(e)}`,
  },
});

/** Runs `execute` once everything the log holds is durable (at once for a log without `whenDurable`). */
export function onceDurable(log: Pick<SessionLog, 'whenDurable' | 'lastSeq'>, execute: () => Promise<ExecOutcome>): Promise<ExecOutcome> {
  if (!log.whenDurable) return execute();
  let wait: Promise<void> | undefined;
  try {
    wait = log.whenDurable(log.lastSeq);
  } catch (e) {
    return Promise.resolve(notDurable(e));
  }
  // After the wait the execute stage sees an abort that came meanwhile (ABORTED, no body).
  return wait ? wait.then(execute, notDurable) : execute();
}
