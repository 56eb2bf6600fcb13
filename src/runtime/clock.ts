/**
 * The injected clock. Its shape matches XState's `clock` option, so the same object drives
 * machine delays (`after`) and runtime timers (timeouts, backoff), and a test can swap both at once.
 */
export interface Clock {
  /** Milliseconds since an arbitrary origin (the system clock: since the epoch). */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds; returns a handle for `clearTimeout`. */
  setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown;
  /** Cancels a timer set by `setTimeout` (a handle already fired or cleared is ignored). */
  clearTimeout(handle: unknown): void;
}

/** The real clock of the host (browser or Node). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Resolves after `ms` on `clock`; rejects with the signal's reason when it aborts first. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(signal!.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A clock that only moves when told to: for tests and simulations. `advance(ms)` fires due
 * timers in time order and lets promise reactions run between them.
 */
export class ManualClock implements Clock {
  private time: number;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = 0) {
    this.time = start;
  }
  /** The clock's current time: only `advance` moves it. */
  now(): number {
    return this.time;
  }
  /** Schedules `fn` for when `advance` passes `now() + ms`. */
  setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + Math.max(0, ms), fn });
    return id;
  }
  /** Cancels a scheduled timer. */
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  /** Number of timers not yet fired. */
  get pending(): number {
    return this.timers.size;
  }
  /** Moves time forward by `ms`, firing each due timer and flushing microtasks after it. */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms;
    await flushMicrotasks();
    for (;;) {
      let nextId = -1;
      let next: { at: number; fn: () => void } | undefined;
      for (const [id, t] of this.timers) {
        if (t.at <= target && (!next || t.at < next.at || (t.at === next.at && id < nextId))) {
          next = t;
          nextId = id;
        }
      }
      if (!next) break;
      this.timers.delete(nextId);
      this.time = Math.max(this.time, next.at);
      next.fn();
      await flushMicrotasks();
    }
    this.time = target;
  }
  /** Advances to the next due timer (if any) and fires everything due then. */
  async runNext(): Promise<boolean> {
    let at = Infinity;
    for (const t of this.timers.values()) at = Math.min(at, t.at);
    if (at === Infinity) return false;
    await this.advance(at - this.time);
    return true;
  }
}

/** Lets queued promise reactions (several hops deep) run. */
export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}
