/**
 * What `runtime.close()` runs: the disposers registered with `onClose` (an MCP connection, a
 * file), latest first, each once; a failing one is recorded as a `warning` (`CLOSE_FAILED`), never
 * thrown. Browser-safe.
 */
import type { SessionLog } from './log/sessionLog.js';

export interface Disposers {
  add(fn: () => Promise<void> | void): void;
  /** Runs every disposer once (then `finally`); the same promise on every call. */
  close(): Promise<void>;
}

export function createDisposers(log: SessionLog, finally_: () => void): Disposers {
  const fns: Array<() => Promise<void> | void> = [];
  let closed: Promise<void> | undefined;
  return {
    add: (fn) => void fns.push(fn),
    close: () =>
      (closed ??= (async () => {
        for (const fn of fns.splice(0).reverse()) {
          try {
            await fn();
          } catch (e) {
            log.append({ type: 'warning', code: 'CLOSE_FAILED', message: `a disposer failed while closing the runtime: ${String(e)}` });
          }
        }
        finally_();
      })()),
  };
}
