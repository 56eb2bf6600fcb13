/**
 * Approvals of worker-run sessions answered from pages (SPEC §11.2): `dsh.answers (session_id,
 * approval_seq, answer, reason)`, one row per question (`approval_seq` is the `seq` of its
 * `tool/approval-request`). The primary key makes the first answer win across every web process
 * and tab; a later one is told the winner. The worker that holds the session waits for the row
 * (`waitForPageAnswer`, polling) and logs the answer before the call goes on. Created by
 * `migrateTurnQueue` with the queue's tables.
 */
import type { ApprovalAnswer, ApprovalDenial } from '../../protocol/index.js';
import type { PgPoolLike } from './pgStore.js';

export type PageAnswer = { readonly answer: 'allow-once' | 'allow-always' } | { readonly answer: 'deny'; readonly reason?: string };

/** Records `given` for the question at `approvalSeq` unless one is there: `won` says whose stands. */
export async function recordPageAnswer(pool: PgPoolLike, sessionId: string, approvalSeq: number, given: PageAnswer): Promise<{ won: boolean; winner: PageAnswer }> {
  const reason = given.answer === 'deny' ? (given.reason ?? null) : null;
  const inserted = await pool.query(
    `INSERT INTO dsh.answers (session_id, approval_seq, answer, reason) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING answer`,
    [sessionId, approvalSeq, given.answer, reason],
  );
  if (inserted.rows.length === 1) return { won: true, winner: given };
  const winner = await readPageAnswer(pool, sessionId, approvalSeq);
  return { won: false, winner: winner ?? given };
}

/** The answer recorded for the question at `approvalSeq`, if any. */
export async function readPageAnswer(pool: PgPoolLike, sessionId: string, approvalSeq: number): Promise<PageAnswer | undefined> {
  const r = await pool.query(`SELECT answer, reason FROM dsh.answers WHERE session_id = $1 AND approval_seq = $2`, [sessionId, approvalSeq]);
  const row = r.rows[0] as { answer: string; reason: string | null } | undefined;
  if (!row) return undefined;
  if (row.answer === 'deny') return { answer: 'deny', ...(row.reason !== null ? { reason: row.reason } : {}) };
  return { answer: row.answer === 'allow-always' ? 'allow-always' : 'allow-once' };
}

/** Waits (polling every `pollMs`) until a page answers the question at `approvalSeq`; rejects when `signal` aborts. */
export async function waitForPageAnswer(pool: PgPoolLike, sessionId: string, approvalSeq: number, signal: AbortSignal, pollMs = 200): Promise<ApprovalAnswer | ApprovalDenial> {
  for (;;) {
    if (signal.aborted) throw signal.reason;
    const a = await readPageAnswer(pool, sessionId, approvalSeq).catch(() => undefined);
    if (a) {
      if (a.answer === 'deny') return a.reason !== undefined && a.reason.trim() !== '' ? { answer: 'denied', reason: a.reason } : 'denied';
      return a.answer === 'allow-always' ? 'allowed-always' : 'allowed-once';
    }
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, pollMs);
      function done() {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
