/**
 * Turns queued for sessions on PostgreSQL, on graphile-worker's job queue (0.16.x: the newest line
 * that runs on Node 20; loaded when the queue is opened).
 *
 * `submit(session, message)` appends the message to the session's inbox, `dsh.inbox (session_id,
 * n, message)` with `n` = 1, 2, … per session, and, in the same transaction, adds a graphile-worker
 * job `dsh_session` for the session, in a queue named after it (`dsh:<id>`: graphile-worker runs a
 * named queue's jobs one at a time) with the session as its job key (one pending job per session;
 * a job added while one runs waits behind it). A worker that takes the job takes the session's
 * lease and runs, in `n` order, every inbox message the log has not started a turn for yet.
 *
 * Worker liveness: each worker process keeps a row in `dsh.workers` (its graphile-worker ids,
 * renewed like a lease). A worker that finds another's row expired (the process died: SIGKILL, a
 * lost machine) deletes it and unlocks that worker's jobs (graphile-worker's force_unlock_workers),
 * so another worker takes them at once instead of after graphile-worker's own 4-hour timeout.
 */
import { assertSessionId } from '../../runtime/store/sessionStore.js';
import { checkMessageSize, DEFAULT_MESSAGE_LIMITS } from '../../runtime/messageLimits.js';
import { inTransaction, type PgPoolLike } from './pgStore.js';

export const QUEUE_TASK = 'dsh_session';

export const PG_QUEUE_SQL = `
CREATE TABLE IF NOT EXISTS dsh.inbox (
  session_id text NOT NULL,
  n integer NOT NULL CHECK (n > 0),
  message text NOT NULL,
  submitted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, n)
);
CREATE TABLE IF NOT EXISTS dsh.workers (
  id text PRIMARY KEY,
  job_worker_ids text[] NOT NULL DEFAULT '{}',
  expires_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS dsh.answers (
  session_id text NOT NULL,
  approval_seq bigint NOT NULL CHECK (approval_seq > 0),
  answer text NOT NULL CHECK (answer IN ('allow-once', 'allow-always', 'deny')),
  reason text,
  answered_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, approval_seq)
);`;

/** The turn id of a session's `n`th submitted turn, as the worker that runs it names it (`turn-<n>`). */
export const submittedTurnId = (n: number): string => `turn-${n}`;

const QUEUE_LOCK = 0x64736802;
/** The advisory lock held (on its own connection) while graphile-worker's schema is installed. */
const MIGRATION_LOCK = 0x64736803;
/** Errors of two installers racing on one fresh database: retried (unique violation, duplicate schema/table/object, deadlock). */
const RACE_CODES = new Set(['23505', '42P06', '42P07', '42710', '40P01']);

/**
 * Creates the queue's tables and graphile-worker's schema (idempotent). Any number of processes
 * may call it at once on a fresh database: graphile-worker 0.16 installs its schema without a
 * lock (two installers collide on `pg_namespace_nspname_index`), so its migrations run under a
 * session advisory lock held on a connection of their own (a pool of one connection skips the
 * lock), and an installer that still loses a race (one of RACE_CODES) tries again, up to 8 times.
 */
export async function migrateTurnQueue(pool: PgPoolLike): Promise<void> {
  await inTransaction(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock($1)', [QUEUE_LOCK]);
    await c.query(PG_QUEUE_SQL);
  });
  const { runMigrations } = await import('graphile-worker');
  const logger = await quietLogger();
  const lockable = ((pool as { options?: { max?: number } }).options?.max ?? 10) > 1;
  for (let attempt = 1; ; attempt++) {
    const lock = lockable ? await pool.connect() : undefined;
    try {
      await lock?.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      await runMigrations({ pgPool: pool as never, logger });
      return;
    } catch (e) {
      if (attempt >= 8 || !RACE_CODES.has((e as { code?: string }).code ?? '')) throw e;
      await new Promise((r) => setTimeout(r, 20 * attempt + Math.random() * 50));
    } finally {
      if (lock) {
        await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
        lock.release();
      }
    }
  }
}

/** graphile-worker's logger, silenced below warnings. */
export async function quietLogger(): Promise<never> {
  const gw = await import('graphile-worker');
  return new gw.Logger(() => (level, message) => {
    if (level === 'error' || level === 'warning') process.stderr.write(`dsh worker queue: ${level}: ${message}\n`);
  }) as never;
}

/** A turn submitted to a stored session, waiting for a worker. */
export interface SubmittedTurn {
  sessionId: string;
  /** Its place among the session's submitted turns (1, 2, …): turns run in this order. */
  n: number;
}

/**
 * Queues one turn of `sessionId`; resolves once it is committed. A message over `maxMessageBytes`
 * (default 1 MiB: src/runtime/messageLimits.ts) is refused (`MessageLimitError`), nothing queued.
 */
export async function submitTurn(pool: PgPoolLike, sessionId: string, message: string, options: { maxMessageBytes?: number } = {}): Promise<SubmittedTurn> {
  assertSessionId(sessionId);
  if (typeof message !== 'string' || message.length === 0) throw new Error('a turn needs a non-empty message');
  checkMessageSize(message, 'message', { ...DEFAULT_MESSAGE_LIMITS, ...(options.maxMessageBytes !== undefined ? { maxMessageBytes: options.maxMessageBytes } : {}) });
  return inTransaction(pool, async (c) => {
    // Submissions of one session are numbered one at a time.
    await c.query(`SELECT pg_advisory_xact_lock(hashtext('dsh.inbox'), hashtext($1))`, [sessionId]);
    const r = await c.query(
      `INSERT INTO dsh.inbox (session_id, n, message)
       SELECT $1, coalesce(max(n), 0) + 1, $2 FROM dsh.inbox WHERE session_id = $1 RETURNING n`,
      [sessionId, message],
    );
    await c.query(`SELECT graphile_worker.add_job($1, json_build_object('sessionId', $2::text), queue_name := $3, job_key := $3, max_attempts := 1000)`, [
      QUEUE_TASK,
      sessionId,
      `dsh:${sessionId}`,
    ]);
    return { sessionId, n: Number(r.rows[0].n) };
  });
}

/** The inbox messages of a session after its first `started` ones, in order. */
export async function pendingTurns(pool: PgPoolLike, sessionId: string, started: number): Promise<Array<{ n: number; message: string }>> {
  const r = await pool.query(`SELECT n, message FROM dsh.inbox WHERE session_id = $1 AND n > $2 ORDER BY n`, [sessionId, started]);
  return (r.rows as Array<{ n: number; message: string }>).map((x) => ({ n: Number(x.n), message: x.message }));
}

/** How many turns each session was submitted (for waiting until a session is done). */
export async function submittedTurns(pool: PgPoolLike, sessionId: string): Promise<number> {
  const r = await pool.query(`SELECT coalesce(max(n), 0) AS n FROM dsh.inbox WHERE session_id = $1`, [sessionId]);
  return Number(r.rows[0].n);
}

/** Renews this worker's liveness row; unlocks the jobs of workers whose row expired. Returns the ids it reaped. */
export async function heartbeat(pool: PgPoolLike, workerId: string, jobWorkerIds: readonly string[], ttlMs: number): Promise<string[]> {
  await pool.query(
    `INSERT INTO dsh.workers (id, job_worker_ids, expires_at) VALUES ($1, $2, now() + $3::interval)
     ON CONFLICT (id) DO UPDATE SET job_worker_ids = EXCLUDED.job_worker_ids, expires_at = EXCLUDED.expires_at`,
    [workerId, [...jobWorkerIds], `${Math.max(1, Math.round(ttlMs))} milliseconds`],
  );
  const dead = await pool.query(`DELETE FROM dsh.workers WHERE expires_at < now() RETURNING id, job_worker_ids`);
  const ids = (dead.rows as Array<{ id: string; job_worker_ids: string[] }>).flatMap((r) => r.job_worker_ids);
  if (ids.length > 0) await pool.query(`SELECT graphile_worker.force_unlock_workers($1::text[])`, [ids]);
  return (dead.rows as Array<{ id: string }>).map((r) => r.id);
}

/** Removes this worker's liveness row (a clean stop). */
export async function leaveWorkers(pool: PgPoolLike, workerId: string): Promise<void> {
  await pool.query(`DELETE FROM dsh.workers WHERE id = $1`, [workerId]);
}
