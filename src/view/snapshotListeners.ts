/**
 * The listeners of a session view's store: told once per burst of changes (in a microtask), and
 * only when the snapshot is a new object. A listener (a UI) that throws breaks neither the view nor
 * the other listeners. Browser-safe.
 */
export interface SnapshotListeners {
  subscribe(listener: () => void): () => void;
  /** Something changed: the listeners are told in a microtask, once, if the snapshot did change. */
  changed(): void;
  /** Takes the current snapshot as the one the listeners have seen (after a reset). */
  seen(): void;
  clear(): void;
}

export function snapshotListeners(snapshot: () => unknown): SnapshotListeners {
  const listeners = new Set<() => void>();
  let scheduled = false;
  let last = snapshot();
  const notify = () => {
    scheduled = false;
    const now = snapshot();
    if (now === last) return;
    last = now;
    for (const l of [...listeners]) {
      try {
        l();
      } catch {
        // A listener (a UI) cannot break the view.
      }
    }
  };
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    changed() {
      // Stryker disable next-line ConditionalExpression: a second notify of the same burst finds the snapshot the listeners were told (`now === last`): the flag only saves microtasks
      if (scheduled) return;
      // Stryker disable next-line BooleanLiteral: see above
      scheduled = true;
      queueMicrotask(notify);
    },
    seen() {
      last = snapshot();
    },
    clear: () => listeners.clear(),
  };
}
