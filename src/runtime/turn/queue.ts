/**
 * The order of a session's turns (SPEC §8.16, §9.3): one at a time, in the order they were asked
 * for. A turn enters with what begins it (its lifecycle's `BEGIN`); it begins at once when no turn
 * is running, else when every turn before it has left. Only the turns not yet begun are kept.
 */
export class TurnQueue {
  #running = false;
  readonly #waiting: Array<() => void> = [];

  /**
   * Queues `begin`, or calls it now when no turn runs. `soon`: in a microtask rather than now (a
   * turn asked for from inside an actor's action, such as a late steer's follow-up, begins outside it).
   */
  enter(begin: () => void, soon = false): void {
    if (this.#running) {
      this.#waiting.push(begin);
      return;
    }
    this.#running = true;
    if (soon) queueMicrotask(begin);
    else begin();
  }

  /** The running turn has ended: the next one begins. */
  readonly leave = (): void => {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#running = false;
  };
}
