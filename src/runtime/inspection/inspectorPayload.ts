/**
 * What of a dsh actor's context is worth sending to an external inspector (e.g. `@statelyai/inspect`'s
 * `sanitizeContext` option): the data (turn id, step index, the call's request, where it runs, its
 * settlement and result), not the wiring (the injected port, the model, the session log, abort
 * controllers, the scheduler's commit gate). Without it every snapshot carries the session log
 * serialised to the inspector's depth limit. Browser-safe.
 */

/** Context keys that hold wiring, not state: dropped from inspected snapshots. */
export const WIRING_CONTEXT_KEYS: readonly string[] = ['deps', 'pipeline', 'log', 'gate', 'abort', 'approvalAbort', 'deadline', 'closeCrashedStep', 'prepareOutcome', 'prepared', 'model', 'tools'];

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

/** An event as an inspector should see it: an `xstate.init`'s input (the actor's wiring) sanitized like a context. */
export function sanitizeInspectedEvent<E extends { readonly type: string }>(event: E): E {
  if (event.type !== 'xstate.init' || !('input' in event)) return event;
  return { ...event, input: sanitizeInspectedContext(event.input) };
}

/** The parts of a snapshot an inspector shows; XState's also carries the actor's input (its wiring) in every one. */
const SNAPSHOT_KEYS = ['status', 'value', 'context', 'children', 'output', 'error', 'tags'] as const;

/**
 * An external inspector's event with its snapshot cut to what an inspector shows (status, state
 * value, context, children, output, error, tags: not the input), for `@statelyai/inspect`'s `serialize` option. Events
 * without a snapshot are returned as they are.
 */
export function leanInspectedEvent<E extends { readonly type: string }>(event: E): E {
  const snapshot = 'snapshot' in event ? event.snapshot : undefined;
  if (snapshot === null || typeof snapshot !== 'object') return event;
  const lean: Record<string, unknown> = {};
  for (const key of SNAPSHOT_KEYS) if (key in snapshot) lean[key] = (snapshot as Record<string, unknown>)[key];
  return { ...event, snapshot: lean };
}

/**
 * Options for `@statelyai/inspect`'s inspectors (`createWebSocketInspector({ url, ...statelyInspectorOptions })`):
 * contexts and actor inputs without their wiring, snapshots without the input.
 */
export const statelyInspectorOptions = {
  /** Drops the wiring (ports, services, abort handles) from contexts and inputs. */
  sanitizeContext: sanitizeInspectedContext,
  /** Drops the wiring from events that carry it. */
  sanitizeEvent: sanitizeInspectedEvent,
  /** Sends snapshots without their input. */
  serialize: leanInspectedEvent,
};
