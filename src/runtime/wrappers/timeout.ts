import { ErrorCode, errorNameFor } from '../../protocol/index.js';
import type { CallView, ExecOutcome } from '../../../machines/callStages.js';
import type { ExecuteWrapper } from '../hooks.js';
import { ToolError } from '../toolError.js';

/** Options of the `timeout()` execute wrapper. */
export interface TimeoutOptions {
  /** Deadline in ms, or a function of the call (return undefined for no deadline). */
  ms: number | ((call: CallView) => number | undefined);
}

/**
 * Settles the call as `TIMEOUT` at the deadline, even when the body ignores its signal: the body's
 * signal is aborted with a TIMEOUT reason, and its late outcome is discarded (and reported).
 */
export function timeout(options: TimeoutOptions): ExecuteWrapper {
  return (call, exec, next) => {
    const ms = typeof options.ms === 'function' ? options.ms(call) : options.ms;
    if (ms === undefined || !Number.isFinite(ms)) return next();
    const controller = new AbortController();
    const message = `"${call.toolName}" did not finish within ${ms} ms`;
    return new Promise<ExecOutcome>((resolve) => {
      let settled = false;
      const timer = exec.clock.setTimeout(() => {
        if (settled) return;
        settled = true;
        controller.abort(new ToolError(ErrorCode.TIMEOUT, message));
        resolve({ ok: false, error: { name: errorNameFor(ErrorCode.TIMEOUT), code: ErrorCode.TIMEOUT, message } });
      }, ms);
      // Once the caller has cancelled, the deadline is moot: the call settles as ABORTED, and a
      // TIMEOUT fired later would only be discarded (and wrongly reported as a late body).
      const stopClock = () => exec.clock.clearTimeout(timer);
      exec.signal.addEventListener('abort', stopClock, { once: true });
      next({ signal: controller.signal }).then((outcome) => {
        exec.signal.removeEventListener('abort', stopClock);
        if (settled) {
          // A body that stopped because of our abort did what it should: nothing late to note.
          if (!outcome.ok && outcome.error.code === ErrorCode.TIMEOUT && outcome.error.message === message) return;
          exec.warn('LATE_OUTCOME_DISCARDED', `"${call.toolName}" settled after its ${ms} ms deadline; the outcome was discarded`, {
            ok: outcome.ok,
            code: outcome.ok ? undefined : outcome.error.code,
          });
          return;
        }
        settled = true;
        exec.clock.clearTimeout(timer);
        resolve(outcome);
      });
    });
  };
}

