/**
 * The session store port: where a session's events live when more than one process may write it.
 * Two backends implement it (a JSONL file per session, src/adapters/store/jsonlStore.ts; Postgres,
 * src/adapters/store/pgStore.ts) and pass the same conformance suite
 * (test/store/conformance.ts).
 *
 * - One writer per session: a writer first takes the session's lease. A lease has an owner, an
 *   expiry and a fencing token that grows with every new holder; a holder renews it while it works.
 *   A lease that was not renewed in time can be taken by anyone (its holder died, or stalled).
 * - Appends are conditional: on the expected last `seq` (so two writers can never interleave or
 *   duplicate) and on the lease's token still being the session's current one, unexpired (so a
 *   writer that lost its lease, say after a stall, cannot write any more: it is fenced off).
 *
 * Browser-safe: types and an error class only.
 */
import type { LogEvent } from '../../protocol/index.js';

/** A session's writer lease in a store: who holds it, its fencing token, when it expires. */
export interface Lease {
  readonly sessionId: string;
  /** Who holds it (a worker id). */
  readonly owner: string;
  /** The fencing token: strictly greater than that of every earlier holder of this session. */
  readonly token: number;
  /** When it expires unless renewed (ms since the epoch, on the store's clock). */
  readonly expiresAt: number;
}

/**
 * `SEQ_CONFLICT`: the session's last `seq` is not the one the append expected (another writer got
 * there first), or the events do not go on from it; `LEASE_LOST`: the lease is not the session's
 * current one (taken over, released) or has expired; `LEASE_HELD`: another owner holds a live lease.
 */
export type StoreConflictCode = 'SEQ_CONFLICT' | 'LEASE_LOST' | 'LEASE_HELD';

/** An append or renewal the store refused: nothing of it was written. */
export class StoreConflictError extends Error {
  constructor(
    readonly code: StoreConflictCode,
    readonly sessionId: string,
    detail: string,
  ) {
    super(`session ${sessionId}: ${code}: ${detail}`);
    this.name = 'StoreConflictError';
  }
}

/** The port of a session store: read a session, append under a lease, take, renew and release leases (JSONL, Postgres, …). */
export interface SessionStore {
  /** `jsonl`, `postgres`, … */
  readonly kind: string;
  /**
   * Takes the session's writer lease for `ttlMs` when it is free, expired, or already `owner`'s
   * (then renewed, same token); undefined when another owner holds a live one. A new holder gets
   * a token greater than every earlier one.
   */
  acquire(sessionId: string, owner: string, ttlMs: number): Promise<Lease | undefined>;
  /** Extends a held lease by `ttlMs` from now; rejects `LEASE_LOST` when it is no longer held. */
  renew(lease: Lease, ttlMs: number): Promise<Lease>;
  /** Gives the lease up (anyone may take it at once); a lease already lost is left alone. */
  release(lease: Lease): Promise<void>;
  /**
   * Appends `events` (their `seq`s run on from `expectedSeq + 1`) if the session's last `seq` is
   * `expectedSeq` and `lease` is its current, unexpired lease; all of them or none, durable when it
   * resolves. Rejects with a `StoreConflictError` otherwise (nothing written).
   */
  append(lease: Lease, expectedSeq: number, events: readonly LogEvent[]): Promise<void>;
  /** The session's events with `seq >= from` (default 1), in order; [] for an unknown session. */
  read(sessionId: string, from?: number): Promise<LogEvent[]>;
  /** The session's last `seq` (0 for an unknown or empty session). */
  lastSeq(sessionId: string): Promise<number>;
  /** Releases what the store holds open (connections, files). */
  close(): Promise<void>;
}

/** Session ids a store accepts: 1–128 of `A–Z a–z 0–9 . _ -`, not starting with `.` (a file name, never a path). */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** Throws (a plain Error naming the id) unless `sessionId` matches `SESSION_ID_PATTERN`. */
export function assertSessionId(sessionId: string): void {
  if (typeof sessionId !== 'string' || !SESSION_ID_PATTERN.test(sessionId)) {
    throw new Error(`not a session id: ${JSON.stringify(String(sessionId)).slice(0, 140)} (1–128 of A–Z a–z 0–9 . _ -, not starting with .)`);
  }
}
