/**
 * Commands taken once (SPEC §11.2): a POST's `Idempotency-Key` names its effect. The first request
 * with a key runs; a retry with the same key (the network dropped the answer, the page retried)
 * gets the first one's answer, waiting for it when it is still running, and runs nothing. The same
 * key with another command is refused. Keys are kept per session, the latest `max` of them, in this
 * process. Browser-safe.
 */

export interface StoredAnswer {
  readonly status: number;
  readonly body: unknown;
}

export interface IdempotencyCache {
  /**
   * The answer to the command `fingerprint` under `key`: the stored one, or `run()`'s (stored).
   * `undefined` when `key` was used for another command.
   */
  once(key: string, fingerprint: string, run: () => Promise<StoredAnswer>): Promise<StoredAnswer | undefined>;
}

export function idempotencyCache(max = 10_000): IdempotencyCache {
  const entries = new Map<string, { fingerprint: string; answer: Promise<StoredAnswer> }>();
  return {
    once(key, fingerprint, run) {
      const held = entries.get(key);
      if (held) return held.fingerprint === fingerprint ? held.answer : Promise.resolve(undefined);
      const answer = run();
      entries.set(key, { fingerprint, answer });
      // The oldest key goes first (a Map iterates in insertion order).
      if (entries.size > max) entries.delete(entries.keys().next().value!);
      return answer;
    },
  };
}
