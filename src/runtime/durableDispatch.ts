/**
 * No tool body starts before its `tool/call` is durable (SPEC §1: the call is in the log before it
 * can run; with a log on disk, "in the log" means on disk). The scheduler (and `runCall`) append
 * `tool/call` before the call's actor exists; this wraps the pipeline's execute stage so that it
 * first waits until the log is durable up to its last event, which includes that `tool/call`.
 * Only then do the `tools/execute` wrappers and the body run. A crash after a body started thus
 * always leaves its `tool/call` on disk, and resuming closes it as `INTERRUPTED`.
 *
 * Calls reaching the execute stage together share one write+fsync (the sink's group commit). A
 * log that cannot be made durable runs no body: the call settles `ABORTED_BEFORE_DISPATCH`.
 * A log without `whenDurable` (the in-memory log) is durable at once: the pipeline is returned
 * as it is, at no cost. Browser-safe.
 */
import type { CallStages, ExecOutcome } from '../../machines/callStages.js';
import { ErrorCode, errorNameFor } from '../protocol/index.js';
import type { SessionLog } from './log/sessionLog.js';

export function dispatchWhenDurable(pipeline: CallStages, log: SessionLog): CallStages {
  const whenDurable = log.whenDurable;
  if (!whenDurable) return pipeline;
  const notDurable = (e: unknown): ExecOutcome => ({
    ok: false,
    error: {
      name: errorNameFor(ErrorCode.ABORTED_BEFORE_DISPATCH),
      code: ErrorCode.ABORTED_BEFORE_DISPATCH,
      message: `the session log could not make this call's tool/call durable, so it did not run: ${e instanceof Error ? e.message : String(e)}`,
    },
  });
  return {
    ...pipeline,
    execute(call, signal) {
      let wait: Promise<void> | undefined;
      try {
        wait = whenDurable(log.lastSeq);
      } catch (e) {
        return Promise.resolve(notDurable(e));
      }
      // After the wait the pipeline's own execute sees an abort that came meanwhile (ABORTED, no body).
      return wait ? wait.then(() => pipeline.execute(call, signal), notDurable) : pipeline.execute(call, signal);
    },
  };
}
