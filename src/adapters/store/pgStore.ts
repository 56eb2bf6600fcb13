/**
 * The session store on PostgreSQL (through `pg` 8.x, loaded when the store is opened: install it
 * beside dsh). Tables, in the schema `dsh` (created if missing, under an advisory lock so workers
 * starting together do not race):
 *
 * - `dsh.events (session_id, seq, event)`, primary key `(session_id, seq)`: one row per event, the
 *   event's JSON as text (exactly as the log has it; jsonb would reorder its keys);
 * - `dsh.leases (session_id, owner, token, expires_at)`: the writer lease of each session.
 *
 * An append is one transaction: it locks the session's lease row (`FOR SHARE`, so a takeover waits
 * for it and starts after it), checks that the row is the appender's (owner and fencing token) and
 * unexpired on the database's clock, that the session's last `seq` is the expected one, and
 * inserts the events; the primary key refuses a duplicate `seq` whatever happens. Commit = durable
 * (with the server's default `synchronous_commit`).
 *
 * A writer that stops inside an append (SIGSTOP, a GC or VM pause, a network partition) holds the
 * lease row's lock; it cannot hold the session past its lease:
 * - the store's lease and append statements wait at most `lockTimeoutMs` (default 1 s) for a lock
 *   (`SET LOCAL lock_timeout`; other statements on the pool, such as the queue's, keep the server's
 *   default), and every connection has `idle_in_transaction_session_timeout` (`idleInTransactionMs`,
 *   default 5 s), which an append lowers, for its own transaction, to what is left of its lease: the
 *   server ends a stopped appender's transaction (rolled back, its connection closed) by the time
 *   its lease expires;
 * - `acquire`, `renew` and `release` retry a statement that timed out on the lock (SQLSTATE 55P03),
 *   so a takeover waits for the stopped writer's transaction to be ended, then fences it out;
 * - the stopped writer, once it runs again, finds its connection closed (its append fails, nothing
 *   of it committed) or, on a new connection, the lease taken over (`LEASE_LOST`): it writes nothing.
 * Keep lease TTLs above `lockTimeoutMs`. TCP keepalive is on (a partitioned server's connections are
 * noticed by the OS, not after its 2-hour default).
 */
import { LogEventSchema, type LogEvent } from '../../protocol/index.js';
import { assertSessionId, StoreConflictError, type Lease, type SessionStore } from '../../runtime/store/sessionStore.js';

/** How `openPostgresStore` connects: the connection string, pool size and lock timeouts. */
export interface PostgresStoreOptions {
  /** postgres://user@host:port/db (default: `DSH_DATABASE_URL`, then libpq's PG* variables). */
  connectionString?: string;
  /** Most connections of the pool (default 10). */
  maxConnections?: number;
  /** `lock_timeout` of the store's lease and append statements, ms (default 1000): one waits no longer for the lease row (then retried). */
  lockTimeoutMs?: number;
  /** `idle_in_transaction_session_timeout` of the store's connections, ms (default 5000; an append lowers it to its lease's rest). */
  idleInTransactionMs?: number;
}

/** SQLSTATE of a statement that waited `lock_timeout` for a lock. */
const LOCK_TIMEOUT = '55P03';
const isLockTimeout = (e: unknown) => (e as { code?: string } | null)?.code === LOCK_TIMEOUT;

/** Runs `statement` again while it times out on a lock (the holder's transaction is being ended by the server). */
async function retryingLockTimeouts<T>(statement: () => Promise<T>): Promise<T> {
  for (let wait = 10; ; wait = Math.min(wait * 2, 200)) {
    try {
      return await statement();
    } catch (e) {
      if (!isLockTimeout(e)) throw e;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

/** A session store in Postgres: events in one table, leases in another (many processes, many machines). */
export interface PostgresSessionStore extends SessionStore {
  readonly kind: 'postgres';
  /** Session ids with at least one event, in no particular order. */
  sessions(): Promise<string[]>;
  /** The pool (the queue shares it). */
  readonly pool: PgPoolLike;
}

/** What the store uses of a `pg` client (its own types stay out of dsh's declarations). */
export interface PgClientLike {
  /** Runs one SQL statement with its parameters. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query(text: string, values?: unknown[]): Promise<{ rows: any[]; rowCount: number | null }>;
}
/** What the store uses of a `pg` Pool. */
export interface PgPoolLike extends PgClientLike {
  /** A client of its own (for a transaction); `release()` gives it back. */
  connect(): Promise<
    PgClientLike & {
      /** Gives the client back to the pool. */
      release(): void;
    }
  >;
  /** Closes the pool's connections. */
  end(): Promise<void>;
}

const SCHEMA_LOCK = 0x64736801; // 'dsh' 1: the advisory lock taken while creating the tables

export const PG_SCHEMA_SQL = `
CREATE SCHEMA IF NOT EXISTS dsh;
CREATE TABLE IF NOT EXISTS dsh.events (
  session_id text NOT NULL,
  seq bigint NOT NULL CHECK (seq > 0),
  event text NOT NULL,
  PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS dsh.leases (
  session_id text PRIMARY KEY,
  owner text NOT NULL,
  token bigint NOT NULL,
  expires_at timestamptz NOT NULL
);`;

const leaseOf = (sessionId: string, row: { owner: string; token: string | number; expires_ms: number }): Lease => ({
  sessionId,
  owner: row.owner,
  token: Number(row.token),
  expiresAt: Math.round(row.expires_ms),
});

/** Runs `fn` in a transaction on one connection of `pool` (its statements wait at most `lockTimeoutMs` for a lock, when given). */
export async function inTransaction<T>(pool: PgPoolLike, fn: (client: PgClientLike) => Promise<T>, lockTimeoutMs?: number): Promise<T> {
  const client = await pool.connect();
  // A connection the server closes between two statements (idle_in_transaction_session_timeout, a
  // restart) emits `error` on the client: the next statement fails with it instead of the process.
  const ignore = () => {};
  (client as { on?: (e: string, f: () => void) => void }).on?.('error', ignore);
  try {
    // One round trip either way (a simple query may hold two statements).
    await client.query(lockTimeoutMs === undefined ? 'BEGIN' : `BEGIN; SET LOCAL lock_timeout = ${Math.max(1, Math.round(lockTimeoutMs))}`);
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    (client as { off?: (e: string, f: () => void) => void }).off?.('error', ignore);
    client.release();
  }
}

/** Creates the tables (once, under an advisory lock). */
export async function migratePostgresStore(pool: PgPoolLike): Promise<void> {
  await inTransaction(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    await c.query(PG_SCHEMA_SQL);
  });
}

/** Opens a pool, creates the tables if missing, and returns the store. `close()` ends the pool. */
export async function openPostgresStore(options: PostgresStoreOptions = {}): Promise<PostgresSessionStore> {
  let pg: typeof import('pg');
  try {
    pg = (await import('pg')).default as unknown as typeof import('pg');
  } catch (e) {
    throw new Error(`the Postgres session store needs the package pg (npm i pg@8): ${(e as Error).message}`);
  }
  const connectionString = options.connectionString ?? process.env.DSH_DATABASE_URL;
  const pool = new pg.Pool({
    ...(connectionString ? { connectionString } : {}),
    max: options.maxConnections ?? 10,
    idle_in_transaction_session_timeout: options.idleInTransactionMs ?? 5000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle connection that fails (the server restarted) must not crash the process.
  pool.on('error', () => {});
  try {
    await migratePostgresStore(pool);
  } catch (e) {
    await pool.end().catch(() => {});
    throw e;
  }
  return createPostgresStore(pool, { lockTimeoutMs: options.lockTimeoutMs, idleInTransactionMs: options.idleInTransactionMs });
}

/**
 * The store on an existing pool whose database already has the tables (see `migratePostgresStore`).
 * An append's transaction may idle at most `idleInTransactionMs` (default 5000), and never longer
 * than its lease has left; set the pool's `lock_timeout` below the lease TTLs (openPostgresStore does).
 */
export function createPostgresStore(pool: PgPoolLike, options: { lockTimeoutMs?: number; idleInTransactionMs?: number } = {}): PostgresSessionStore {
  const idleMs = Math.max(50, Math.round(options.idleInTransactionMs ?? 5000));
  const lockMs = options.lockTimeoutMs ?? 1000;
  /** One statement, waiting at most `lockMs` for a row lock (retried while it times out). */
  const locking = (text: string, values: unknown[]) => retryingLockTimeouts(() => inTransaction(pool, (c) => c.query(text, values), lockMs));
  const interval = (ms: number) => `${Math.max(1, Math.round(ms))} milliseconds`;
  return {
    kind: 'postgres',
    pool,
    async acquire(sessionId, owner, ttlMs) {
      assertSessionId(sessionId);
      // Free, expired, or already this owner's (then renewed with the same token); a new holder
      // gets token + 1. A held, live lease of another owner matches no row: undefined.
      const r = await locking(
        `INSERT INTO dsh.leases AS l (session_id, owner, token, expires_at) VALUES ($1, $2, 1, now() + $3::interval)
         ON CONFLICT (session_id) DO UPDATE SET
           token = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() THEN l.token ELSE l.token + 1 END,
           owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
         WHERE l.expires_at <= now() OR l.owner = EXCLUDED.owner
         RETURNING owner, token, extract(epoch from expires_at) * 1000 AS expires_ms`,
        [sessionId, owner, interval(ttlMs)],
      );
      return r.rows[0] ? leaseOf(sessionId, r.rows[0]) : undefined;
    },
    async renew(lease, ttlMs) {
      const r = await locking(
        `UPDATE dsh.leases SET expires_at = now() + $4::interval
         WHERE session_id = $1 AND owner = $2 AND token = $3 AND expires_at > now()
         RETURNING owner, token, extract(epoch from expires_at) * 1000 AS expires_ms`,
        [lease.sessionId, lease.owner, lease.token, interval(ttlMs)],
      );
      if (!r.rows[0]) throw new StoreConflictError('LEASE_LOST', lease.sessionId, `lease ${lease.token} of ${lease.owner} expired or was taken over; not renewed`);
      return leaseOf(lease.sessionId, r.rows[0]);
    },
    async release(lease) {
      await locking(`UPDATE dsh.leases SET expires_at = '-infinity' WHERE session_id = $1 AND owner = $2 AND token = $3`, [lease.sessionId, lease.owner, lease.token]);
    },
    async append(lease, expectedSeq, events) {
      const sid = lease.sessionId;
      events.forEach((e, i) => {
        if (e.seq !== expectedSeq + 1 + i) throw new StoreConflictError('SEQ_CONFLICT', sid, `event ${i} of the append has seq ${e.seq}, expected ${expectedSeq + 1 + i}`);
      });
      if (events.length === 0) return;
      try {
        await inTransaction(pool, async (c) => {
          // The row lock and, in the same statement, this transaction's idle limit: no longer than
          // the lease has left (at least 50 ms), so a stopped appender is ended by its lease's end.
          const l = await c.query(
            `SELECT owner, token, expires_at > now() AS live,
               set_config('idle_in_transaction_session_timeout',
                 greatest(50, least($2::int, floor(extract(epoch from (expires_at - now())) * 1000)))::int::text, true) AS idle
             FROM dsh.leases WHERE session_id = $1 FOR SHARE`,
            [sid, idleMs],
          );
          const row = l.rows[0] as { owner: string; token: string; live: boolean } | undefined;
          if (!row || row.owner !== lease.owner || Number(row.token) !== lease.token || !row.live) {
            throw new StoreConflictError('LEASE_LOST', sid, row ? `the lease is ${row.owner}'s (token ${row.token}${row.live ? '' : ', expired'}), not ${lease.owner}'s token ${lease.token}` : 'no lease is held');
          }
          const last = Number((await c.query(`SELECT coalesce(max(seq), 0) AS last FROM dsh.events WHERE session_id = $1`, [sid])).rows[0].last);
          if (last !== expectedSeq) throw new StoreConflictError('SEQ_CONFLICT', sid, `expected last seq ${expectedSeq}, the store has ${last}`);
          await c.query(`INSERT INTO dsh.events (session_id, seq, event) SELECT $1, s, e FROM unnest($2::bigint[], $3::text[]) AS t(s, e)`, [
            sid,
            events.map((e) => e.seq),
            events.map((e) => JSON.stringify(e)),
          ]);
        }, lockMs);
      } catch (e) {
        if ((e as { code?: string }).code === '23505') throw new StoreConflictError('SEQ_CONFLICT', sid, `another append wrote seq ${expectedSeq + 1} first`);
        throw e;
      }
    },
    async read(sessionId, from = 1) {
      assertSessionId(sessionId);
      const r = await pool.query(`SELECT seq, event FROM dsh.events WHERE session_id = $1 AND seq >= $2 ORDER BY seq`, [sessionId, from]);
      const out: LogEvent[] = [];
      let expected = from;
      for (const row of r.rows as Array<{ seq: string; event: string }>) {
        let value: unknown;
        try {
          value = JSON.parse(row.event);
        } catch (e) {
          throw new Error(`session ${sessionId}: seq ${row.seq}: the stored event is not JSON: ${(e as Error).message}`);
        }
        const parsed = LogEventSchema.safeParse(value);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          throw new Error(`session ${sessionId}: seq ${row.seq}: not a log event: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
        }
        if (parsed.data.seq !== Number(row.seq) || parsed.data.seq !== expected) {
          throw new Error(`session ${sessionId}: seq ${row.seq}: expected seq ${expected}, the event says ${parsed.data.seq}`);
        }
        expected++;
        out.push(parsed.data);
      }
      return out;
    },
    async lastSeq(sessionId) {
      const r = await pool.query(`SELECT coalesce(max(seq), 0) AS last FROM dsh.events WHERE session_id = $1`, [sessionId]);
      return Number(r.rows[0].last);
    },
    async sessions() {
      const r = await pool.query(`SELECT DISTINCT session_id FROM dsh.events`);
      return (r.rows as Array<{ session_id: string }>).map((x) => x.session_id);
    },
    async close() {
      await pool.end();
    },
  };
}
