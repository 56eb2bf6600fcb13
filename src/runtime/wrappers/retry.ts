import { ErrorCode } from '../../protocol/index.js';
import type { ExecOutcome } from '../../../machines/callStages.js';
import { sleep } from '../clock.js';
import type { ExecuteWrapper } from '../hooks.js';

/** Options of the `retry()` execute wrapper. */
export interface RetryOptions {
  /** Total attempts including the first (default 3). */
  maxAttempts?: number;
  /** Codes worth another attempt (default: TIMEOUT and TOOL_FAILED). */
  retryableCodes?: readonly ErrorCode[];
  /** Delay before attempt n+1 after attempt n failed (default 100·2^(n-1) ms, capped at 5 s). */
  backoffMs?: (attempt: number) => number;
}

/**
 * Runs the body again on a retryable failure, only for tools marked `idempotent`, a bounded
 * number of times, waiting on the injected clock between attempts. A caller abort stops retrying.
 */
export function retry(options: RetryOptions = {}): ExecuteWrapper {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const retryable = new Set<string>(options.retryableCodes ?? [ErrorCode.TIMEOUT, ErrorCode.TOOL_FAILED]);
  const backoff = options.backoffMs ?? ((n: number) => Math.min(5000, 100 * 2 ** (n - 1)));
  return async (call, exec, next) => {
    if (!call.idempotent) return next();
    let outcome: ExecOutcome = await next({ attempt: 1 });
    for (let attempt = 1; attempt < maxAttempts; attempt++) {
      if (outcome.ok || !retryable.has(outcome.error.code) || exec.signal.aborted) break;
      try {
        await sleep(exec.clock, backoff(attempt), exec.signal);
      } catch {
        break;
      }
      outcome = await next({ attempt: attempt + 1 });
    }
    return outcome;
  };
}
