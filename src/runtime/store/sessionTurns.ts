/**
 * Running a stored session's queued turns as its one writer: take the session's lease (waiting a
 * while if another holds it), replay its log from the store, close what a writer that died left
 * open exactly as a local resume does (`closeOpenWork`: calls without a result get `INTERRUPTED`,
 * open steps and turns end), then run the turns the log has not started yet, in order, one at a
 * time, and release the lease. The log is the record of what ran: a turn counts as started once
 * its `turn/start` is in the store, so a turn that a dead writer started is closed, never run twice.
 * Browser-safe.
 */
import type { Clock } from '../clock.js';
import type { SessionLog } from '../log/sessionLog.js';
import { closeOpenWork, type ClosedWork } from '../openWork.js';
import type { SessionStore } from './sessionStore.js';
import { openStoredSession } from './storedSession.js';

/** What `closeOpenWork` states when a session is taken over: the words of `dsh resume`. */
export const RESUME_REASON = 'the session stopped before this finished (closed on resume)';

/** A submitted turn waiting to run: its place and its message. */
export interface PendingTurn {
  /** Its place among the session's turns (1, 2, …). */
  n: number;
  message: string;
}

/** What `runPendingTurns` needs: the store, the session, the lease owner, the queue, and how to run one turn. */
export interface RunPendingTurnsOptions {
  store: SessionStore;
  sessionId: string;
  /** The lease owner (unique per job: a worker id and the job's). */
  owner: string;
  /** Lease time to live (renewed every third of it). */
  ttlMs: number;
  /** How long to wait for a lease another owner holds (default 2 × ttlMs), then `LEASE_HELD`. */
  waitMs?: number;
  /** The session's submitted turns after the first `started` ones, in order. */
  pending(started: number): Promise<readonly PendingTurn[]>;
  /** Runs one turn on the log (resolves once it has ended). */
  runTurn(log: SessionLog, turn: PendingTurn): Promise<void>;
  clock?: Clock;
  /** Told what a takeover closed (when it closed anything). */
  onClosed?: (closed: ClosedWork) => void;
}

/** What `runPendingTurns` did: turns run, what it closed first, the fencing token. */
export interface PendingTurnsResult {
  /** Turns run now. */
  ran: number;
  /** What was left open and closed first. */
  closed: ClosedWork;
  /** The fencing token this run wrote under. */
  token: number;
}

/** Takes a stored session's lease, closes what a crashed writer left open, and runs its submitted turns in order (what a dsh worker does). */
export async function runPendingTurns(o: RunPendingTurnsOptions): Promise<PendingTurnsResult> {
  const session = await openStoredSession(o.store, o.sessionId, { owner: o.owner, ttlMs: o.ttlMs, waitMs: o.waitMs ?? 2 * o.ttlMs, ...(o.clock ? { clock: o.clock } : {}) });
  const { log, sink } = session;
  let result: PendingTurnsResult;
  try {
    const closed = closeOpenWork(log, RESUME_REASON);
    if (closed.calls + closed.steps + closed.turns > 0) o.onClosed?.(closed);
    let ran = 0;
    for (;;) {
      await sink.flush();
      const started = log.events().filter((e) => e.type === 'turn/start').length;
      const next = (await o.pending(started)).filter((t) => t.n > started);
      if (next.length === 0) break;
      for (const turn of next) {
        if (turn.n !== log.events().filter((e) => e.type === 'turn/start').length + 1) break;
        await o.runTurn(log, turn);
        ran++;
        // A lost lease fails the sink: stop here (the next holder goes on from the store).
        await sink.flush();
      }
    }
    result = { ran, closed, token: session.lease.lease.token };
  } catch (e) {
    // The lease is let go whatever the flush says; the turn's own failure is what is reported.
    await session.close().catch(() => undefined);
    throw e;
  }
  await session.close();
  return result;
}
