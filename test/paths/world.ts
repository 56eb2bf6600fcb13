/**
 * Small pieces every scenario uses to play a planned path against the real runtime: promises the
 * scenario settles when the path says so, and a way to let the runtime reach rest between steps.
 */
import { ManualClock } from '../../src/runtime/clock.js';

export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Promises a scenario settles by hand, in the order they were created. */
export class Pending<T> {
  private readonly queue: Array<Deferred<T>> = [];

  /** A new pending promise (for a listener, the approval service or a tool body to return). */
  next(): Promise<T> {
    const d = deferred<T>();
    this.queue.push(d);
    return d.promise;
  }

  get size(): number {
    return this.queue.length;
  }

  /** Settles the oldest pending promise; throws if the runtime never asked for one. */
  take(what: string): Deferred<T> {
    const d = this.queue.shift();
    if (!d) throw new Error(`the path expects ${what}, but the runtime has not asked for it`);
    return d;
  }
}

/**
 * Lets promise chains and streams run until nothing is left to do without fake time moving
 * (a macrotask turn drains every microtask; a few turns cover stream reads that hop through several).
 */
export async function quiesce(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}

/** Fires the next timer on the fake clock (an XState `after` delay, a backoff, a chunk delay). */
export async function fireNextTimer(clock: ManualClock, what: string): Promise<void> {
  if (!(await clock.runNext())) throw new Error(`the path expects ${what}, but no timer is pending`);
  await quiesce();
}

/** Drives the fake clock until the turn settles (bounded: a turn that hangs is a failed check, not a hung test). */
export async function settleTurn(clock: ManualClock, done: Promise<{ outcome: string }>): Promise<string> {
  let outcome: string | undefined;
  void done.then((o) => (outcome = o.outcome), (e) => (outcome = `rejected: ${String(e)}`));
  for (let i = 0; outcome === undefined && i < 200; i++) {
    await quiesce();
    if (outcome !== undefined) break;
    if (!(await clock.runNext())) await clock.advance(1);
  }
  return outcome ?? 'did not finish';
}

export { ManualClock };
