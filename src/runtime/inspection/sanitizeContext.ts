/**
 * What of a dsh actor's context is worth sending to an external inspector (e.g. `@statelyai/inspect`'s
 * `sanitizeContext` option): the data (turn id, step index, the call's request, where it runs, its
 * settlement and result), not the wiring (the injected port, the model, the session log, abort
 * controllers, the scheduler's commit gate). Without it every snapshot carries the session log
 * serialised to the inspector's depth limit. Browser-safe.
 */

/** Context keys that hold wiring, not state: dropped from inspected snapshots. */
export const WIRING_CONTEXT_KEYS: readonly string[] = ['deps', 'pipeline', 'log', 'gate', 'abort', 'approvalAbort', 'deadline', 'closeCrashedStep', 'prepareOutcome'];

/** The context without its wiring and functions (a shallow copy; anything not an object is returned as it is). */
export function sanitizeInspectedContext<T>(context: T): T | Record<string, unknown> {
  if (context === null || typeof context !== 'object' || Array.isArray(context)) return context;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(context)) {
    if (WIRING_CONTEXT_KEYS.includes(key) || typeof value === 'function') continue;
    out[key] = value;
  }
  return out;
}
