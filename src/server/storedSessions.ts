/**
 * Sessions that `dsh worker`s run on Postgres, served over the wire (issue 34 item 4): the web
 * process runs no agent. A session's log is read from the store as workers append it (polled every
 * `pollMs`); a turn is submitted to the queue (`submitTurn`: the worker names the nth one
 * `turn-<n>`); an answer is recorded in `dsh.answers` (the first one wins, across every web
 * process), where the worker that holds the session and waits on the question (`dsh worker
 * --ask-pages`) reads it. Steering, cancelling, resuming and "decide later" belong to the process
 * that runs a turn: refused here (409). Node only.
 */
import type { LogEvent } from '../protocol/index.js';
import type { ApprovalCommand, LiveFrame, SessionSummary } from '../protocol/wire.js';
import { recordPageAnswer, type PageAnswer } from '../adapters/store/pgAnswers.js';
import { migrateTurnQueue, submitTurn, submittedTurnId } from '../adapters/store/pgQueue.js';
import type { PgPoolLike } from '../adapters/store/pgStore.js';
import type { SessionStore } from '../runtime/store/sessionStore.js';
import { SESSION_ID_PATTERN } from '../runtime/store/sessionStore.js';
import { CommandRefused, winnerOfLogged, type HostedSession } from './hostedSession.js';
import { mirroredLog } from './mirroredLog.js';
import type { SessionDirectory } from './sessionHandler.js';

/** What `postgresSessionDirectory` serves: the store and its queue's pool. */
export interface StoredSessionsOptions {
  readonly store: Pick<SessionStore, 'read'> & { readonly pool: PgPoolLike };
  /** How often an open session's store is read for new events (ms, default 200). */
  readonly pollMs?: number;
}

const randomId = () => globalThis.crypto.randomUUID();

/** Calls whose question is asked and not answered, in a log (the latest question of each call). */
function openQuestions(events: readonly LogEvent[]): Array<{ turnId: string; stepIndex: number; callId: string; seq: number }> {
  const open = new Map<string, { turnId: string; stepIndex: number; callId: string; seq: number }>();
  for (const e of events) {
    if (e.type === 'tool/approval-request' && e.turnId !== undefined && e.stepIndex !== undefined) open.set(`${e.turnId}/${e.stepIndex}/${e.callId}`, { turnId: e.turnId, stepIndex: e.stepIndex, callId: e.callId, seq: e.seq });
    else if ((e.type === 'tool/approval-answer' || e.type === 'tool/result') && e.turnId !== undefined) open.delete(`${e.turnId}/${e.stepIndex}/${e.callId}`);
    else if (e.type === 'turn/end' || e.type === 'turn/suspended') for (const [k, q] of open) if (q.turnId === e.turnId) open.delete(k);
  }
  return [...open.values()];
}

function storedSession(id: string, options: StoredSessionsOptions, initial: readonly LogEvent[]): HostedSession {
  const { store } = options;
  const mirror = mirroredLog(initial);
  const { log } = mirror;
  const liveListeners = new Set<(f: LiveFrame) => void>();
  let answerable = '';
  const answerableFrame = (): LiveFrame => ({ type: 'answerable', calls: openQuestions(log.events()).map(({ turnId, stepIndex, callId }) => ({ turnId, stepIndex, callId })) });
  const emitLive = (f: LiveFrame) => {
    for (const l of [...liveListeners]) {
      try {
        l(f);
      } catch {
        // one connection failing does not stop the others
      }
    }
  };
  let polling = false;
  const poll = async () => {
    if (polling) return;
    polling = true;
    try {
      const fresh = await store.read(id, log.lastSeq + 1);
      for (const e of fresh) if (!mirror.push(e)) break;
      const frame = answerableFrame();
      const text = JSON.stringify(frame);
      if (text !== answerable) {
        answerable = text;
        emitLive(frame);
      }
    } catch {
      // the database is away: the next poll tries again
    } finally {
      polling = false;
    }
  };
  const timer = setInterval(() => void poll(), options.pollMs ?? 200);
  timer.unref?.();
  const refused = (what: string) => new CommandRefused('CONFLICT', `${what} belongs to the worker that runs the session's turn: not available for a session run by dsh workers`);

  return {
    id,
    log,
    eventsAfter: async (after) => log.events({ from: after + 1 }),
    liveState: () => [answerableFrame()],
    onLive(listener) {
      liveListeners.add(listener);
      return () => void liveListeners.delete(listener);
    },
    async startTurn(input) {
      try {
        const { n } = await submitTurn(store.pool, id, input);
        return { turnId: submittedTurnId(n) };
      } catch (e) {
        throw new CommandRefused('BAD_REQUEST', e instanceof Error ? e.message : String(e));
      }
    },
    async followUp(input) {
      return this.startTurn(input);
    },
    steer: async () => {
      throw refused('steering');
    },
    cancel: () => {
      throw refused('cancelling');
    },
    resume: () => {
      throw refused('resuming');
    },
    async answer(approvalSeq: number, command: ApprovalCommand) {
      await poll();
      const request = log.get(approvalSeq);
      if (request?.type !== 'tool/approval-request') throw new CommandRefused('NOT_FOUND', `no approval ${approvalSeq} in this session`);
      if (command.answer === 'suspend') throw refused('deciding later');
      if (!openQuestions(log.events()).some((q) => q.seq === approvalSeq)) {
        const logged = log.events({ from: approvalSeq + 1 }).find((e) => e.type === 'tool/approval-answer' && e.callId === request.callId && e.turnId === request.turnId);
        if (logged?.type === 'tool/approval-answer') {
          const winner = winnerOfLogged(logged);
          throw new CommandRefused('ALREADY_ANSWERED', `approval ${approvalSeq} was already answered (${winner.answer})`, winner);
        }
        throw new CommandRefused('NOT_WAITING', `nothing waits on approval ${approvalSeq}`);
      }
      const given: PageAnswer = command.answer === 'deny' ? { answer: 'deny', ...(command.reason !== undefined ? { reason: command.reason } : {}) } : { answer: command.answer };
      const r = await recordPageAnswer(store.pool, id, approvalSeq, given);
      if (!r.won) throw new CommandRefused('ALREADY_ANSWERED', `approval ${approvalSeq} was already answered (${r.winner.answer})`, { answer: r.winner.answer, ...(r.winner.answer === 'deny' && r.winner.reason !== undefined ? { reason: r.winner.reason } : {}) });
    },
    async close() {
      clearInterval(timer);
      liveListeners.clear();
    },
  };
}

/** The sessions of a Postgres store that `dsh worker`s run: any valid id is a session (empty until its first turn). */
export function postgresSessionDirectory(options: StoredSessionsOptions): SessionDirectory & {
  /** Makes a new session; resolves with its id. */
  create(): Promise<string>;
  /** Lets every open session go (closes their logs and leases). */
  close(): Promise<void>;
} {
  const open = new Map<string, Promise<HostedSession>>();
  let migrated: Promise<void> | undefined;
  const ready = () => (migrated ??= migrateTurnQueue(options.store.pool));
  return {
    async list() {
      const r = await options.store.pool.query(`SELECT session_id, max(seq)::bigint AS last FROM dsh.events GROUP BY session_id ORDER BY session_id LIMIT 10000`);
      return (r.rows as Array<{ session_id: string; last: string | number }>).map((row): SessionSummary => ({ id: row.session_id, lastSeq: Number(row.last) }));
    },
    open(id) {
      if (!SESSION_ID_PATTERN.test(id)) return Promise.resolve(undefined);
      let p = open.get(id);
      if (!p) {
        p = ready().then(async () => storedSession(id, options, await options.store.read(id)));
        open.set(id, p);
        p.catch(() => open.delete(id));
      }
      return p;
    },
    async create() {
      await ready();
      return randomId();
    },
    async close() {
      const all = [...open.values()];
      open.clear();
      for (const p of all) await (await p.catch(() => undefined))?.close();
    },
  };
}
