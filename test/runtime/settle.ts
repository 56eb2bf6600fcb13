import type { ManualClock } from '../../src/runtime/clock.js';

/** Drives a fake clock until `done` settles (a bound that only catches hangs, not a timing assertion). */
export async function settle<T>(clock: ManualClock, done: Promise<T>, maxRounds = 10_000): Promise<T> {
  let finished = false;
  void done.then(() => (finished = true), () => (finished = true));
  for (let i = 0; !finished && i < maxRounds; i++) {
    // Let streams and promise chains run to quiescence before fake time moves.
    await new Promise((r) => setImmediate(r));
    if (finished) break;
    if (!(await clock.runNext())) await clock.advance(1);
  }
  if (!finished) throw new Error(`did not settle within ${maxRounds} rounds`);
  return done;
}
