import type { ExecuteWrapper } from '../hooks.js';

const METRICS = Symbol.for('dsh.metrics');

/**
 * Marks calls as metered: the pipeline then records when each stage was entered and puts the
 * per-stage durations (ms, on the injected clock) in `result.metadata.durationsMs`.
 */
export function metrics(): ExecuteWrapper {
  const wrapper: ExecuteWrapper = (_call, _exec, next) => next();
  (wrapper as unknown as Record<symbol, boolean>)[METRICS] = true;
  return wrapper;
}

/** Whether an execute wrapper is the one `metrics()` made (the runtime then measures the call's stages). */
export function isMetricsWrapper(fn: unknown): boolean {
  return typeof fn === 'function' && (fn as unknown as Record<symbol, unknown>)[METRICS] === true;
}
