/**
 * `dsh worker`: takes sessions' queued turns from the Postgres queue (graphile-worker, see
 * src/adapters/store/pgQueue.ts) and runs them, any number of sessions at once (`concurrency`),
 * each session's turns in order on whichever worker holds its lease (runPendingTurns). A session
 * works in `<workspaces>/<session id>` with the built-in tools confined to it, the config's
 * policies, and no one to ask: an `ask` is denied unless pre-approved (`allow`).
 */
import { EventEmitter } from 'node:events';
import { mkdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { heartbeat, leaveWorkers, migrateTurnQueue, pendingTurns, QUEUE_TASK, quietLogger, submittedTurnId } from '../../adapters/store/pgQueue.js';
import type { PostgresSessionStore } from '../../adapters/store/pgStore.js';
import { scriptedModel, type ScriptedResponse } from '../../adapters/model/scriptedModel.js';
import { assertSessionId } from '../../runtime/store/sessionStore.js';
import { runPendingTurns } from '../../runtime/store/sessionTurns.js';
import type { DshConfig } from '../../config/schema.js';
import { createAgentSession } from '../run/agentSession.js';
import { deniedWithoutTerminal } from '../run/approvals.js';
import { waitForPageAnswer } from '../../adapters/store/pgAnswers.js';
import type { PgPoolLike } from '../../adapters/store/pgStore.js';
import type { ApprovalService } from '../../runtime/pipeline/index.js';
import type { SessionLog } from '../../runtime/log/sessionLog.js';
import { modelFactory } from '../run/runSetup.js';

export interface SessionWorkerOptions {
  store: PostgresSessionStore;
  /** Directory of the sessions' working directories (`<workspaces>/<id>`, created as needed). */
  workspaces: string;
  /** Sessions run at once by this process (default 4). */
  concurrency?: number;
  /** Lease (and liveness) time to live, ms (default 30 s; renewed every third of it). */
  leaseMs?: number;
  /** `provider:model`, `scripted:FILE.json`, or undefined for the embedded scripted model. */
  model?: string;
  baseUrl?: string;
  config?: DshConfig;
  allow?: readonly string[];
  /** A question waits for a page's answer (`dsh.answers`, pgAnswers.ts) instead of being denied. */
  askPages?: boolean;
  /** One line per session run, takeover and failure. */
  say?: (line: string) => void;
  env?: Readonly<Record<string, string | undefined>>;
}

export interface RunningWorker {
  readonly id: string;
  /** Stops taking jobs, lets running turns finish, leaves. */
  stop(): Promise<void>;
  /** Settles when the worker has stopped. */
  readonly done: Promise<void>;
}

/** A fresh model for each turn in `cwd` (a scripted model counts its requests: one per turn). */
async function perTurnModel(o: SessionWorkerOptions): Promise<(cwd: string) => Promise<LanguageModelV3>> {
  const env = o.env ?? process.env;
  const spec = o.model ?? o.config?.model;
  if (spec?.startsWith('scripted:')) {
    const file = spec.slice('scripted:'.length);
    const steps = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (!Array.isArray(steps)) throw new Error(`${file}: a scripted model is a JSON array of responses`);
    return async () => scriptedModel(steps as ScriptedResponse[], { modelId: `scripted:${file}` });
  }
  if (spec === undefined || spec === 'embedded') return async (cwd) => (await modelFactory({ spec: 'embedded' }, { cwd, env }))();
  const baseUrl = o.baseUrl ?? (spec === o.config?.model ? o.config?.baseUrl : undefined);
  const make = await modelFactory({ spec, ...(baseUrl ? { baseUrl } : {}) }, { cwd: process.cwd(), env });
  return async () => make();
}

/**
 * Questions answered by pages: the call's `tool/approval-request` is in the log before it is asked,
 * so its `seq` names the question; it is made durable (pages read the store), then the answer a
 * page recorded for it (the first one) comes back.
 */
function pageApprovals(pool: PgPoolLike, sessionId: string, log: Pick<SessionLog, 'events' | 'whenDurable'>): ApprovalService {
  return {
    async request(req, signal) {
      const events = log.events();
      let seq: number | undefined;
      for (let i = events.length - 1; i >= 0 && seq === undefined; i--) {
        const e = events[i]!;
        if (e.type === 'tool/approval-request' && e.callId === req.callId) seq = e.seq;
      }
      if (seq === undefined) return 'denied';
      // The question reaches the store (so the pages) now, not at the next commit point.
      await log.whenDurable?.(seq);
      return waitForPageAnswer(pool, sessionId, seq, signal);
    },
  };
}

export async function startSessionWorker(o: SessionWorkerOptions): Promise<RunningWorker> {
  const gw = await import('graphile-worker');
  const store = o.store;
  const pool = store.pool;
  const leaseMs = o.leaseMs ?? 30_000;
  const say = o.say ?? (() => {});
  const id = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const modelFor = await perTurnModel(o);
  await migrateTurnQueue(pool);

  // graphile-worker's job slots (its "workers"): each runs one job at a time. A slot dies when it
  // cannot record a job's end (the database went away mid-job: "committing seppuku"), leaving its
  // job locked, and graphile-worker 0.16 does not replace it. Here a dead slot's id is dropped
  // from this process's liveness row once its job is unlocked (force_unlock_workers: the job is
  // then taken again and the session's queue moves on), and a new slot is started in its place.
  const jobWorkerIds: string[] = [];
  const deadSlots = new Set<string>();
  const unlockDeadSlots = async () => {
    if (deadSlots.size === 0) return;
    const ids = [...deadSlots];
    await pool.query(`SELECT graphile_worker.force_unlock_workers($1::text[])`, [ids]);
    for (const d of ids) {
      deadSlots.delete(d);
      const i = jobWorkerIds.indexOf(d);
      if (i >= 0) jobWorkerIds.splice(i, 1);
    }
    say(`${ids.length} dead job slot(s) released: their jobs are taken again`);
  };
  const beat = () =>
    heartbeat(pool, id, jobWorkerIds, leaseMs)
      .then((reaped) => {
        for (const w of reaped) say(`worker ${w} stopped renewing: its jobs are unlocked`);
        return unlockDeadSlots();
      })
      .catch((e: unknown) => say(`heartbeat failed (retried every ${Math.max(50, Math.floor(leaseMs / 3))} ms): ${String(e)}`));

  const task = async (payload: unknown, helpers: { job: { id: string | number; locked_by?: string | null } }) => {
    // The job's worker id is in this process's liveness row before any work starts, so that if
    // this process dies now its job is unlocked for another worker.
    const by = helpers.job.locked_by;
    if (by && !jobWorkerIds.includes(by)) {
      jobWorkerIds.push(by);
      await beat();
    }
    const sessionId = (payload as { sessionId?: unknown } | null)?.sessionId;
    if (typeof sessionId !== 'string') throw new Error(`a ${QUEUE_TASK} job without a session id`);
    assertSessionId(sessionId);
    const cwd = join(o.workspaces, sessionId);
    mkdirSync(cwd, { recursive: true });
    const r = await runPendingTurns({
      store,
      sessionId,
      owner: `${id}/job-${helpers.job.id}`,
      ttlMs: leaseMs,
      pending: (started) => pendingTurns(pool, sessionId, started),
      onClosed: (c) => say(`session ${sessionId}: taken over: ${c.calls} call(s) marked INTERRUPTED, ${c.steps} step(s) and ${c.turns} turn(s) closed`),
      runTurn: async (log, turn) => {
        const model = await modelFor(cwd);
        // The nth submitted turn is `turn-<n>`, the id a web process answered its submit with (a
        // follow-up the turn makes gets `turn-<n>-<k>`).
        let made = 0;
        const session = createAgentSession({
          cwd,
          log,
          newTurnId: () => (made++ === 0 ? submittedTurnId(turn.n) : `${submittedTurnId(turn.n)}-${made}`),
          model: () => model,
          approval: o.askPages ? pageApprovals(pool, sessionId, log) : deniedWithoutTerminal((line) => say(line.replace(/^dsh: /, ''))),
          ...(o.allow ? { allow: o.allow } : {}),
          // A queued message was held to the size limit when it was submitted (submitTurn): the
          // worker runs it whatever its own limit, so a session never waits behind one it refuses.
          config: { ...o.config, maxMessageBytes: 256 * 1024 * 1024 },
        });
        try {
          const done = await session.startTurn(turn.message).done;
          say(`session ${sessionId}: turn ${turn.n} ${done.outcome}`);
        } finally {
          await session.runtime.close();
          // The sandbox's private /tmp goes with the turn (a worker lives long).
          await session.tools.sandbox.dispose();
        }
      },
    });
    if (r.ran === 0 && r.closed.turns === 0) say(`session ${sessionId}: nothing to run`);
  };

  type Runner = Awaited<ReturnType<typeof gw.run>>;
  const runners = new Set<{ runner?: Runner; live: number }>();
  let stopping: Promise<void> | undefined;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  /** A graphile-worker pool of `concurrency` slots on the shared connection pool. */
  const startRunner = async (concurrency: number) => {
    const entry: { runner?: Runner; live: number } = { live: 0 };
    const events = new EventEmitter();
    events.on('worker:create', ({ worker }: { worker: { workerId: string } }) => {
      jobWorkerIds.push(worker.workerId);
      entry.live++;
    });
    events.on('worker:stop', ({ worker, error }: { worker: { workerId: string }; error?: unknown }) => {
      entry.live--;
      if (stopping) return;
      say(`job slot ${worker.workerId} died${error ? ` (${String((error as Error).message ?? error).split('\n', 1)[0]})` : ''}: its job is unlocked once the database answers, and a new slot replaces it`);
      deadSlots.add(worker.workerId);
      if (entry.live <= 0 && entry.runner) {
        runners.delete(entry);
        void entry.runner.stop().catch(() => {});
      }
      void unlockDeadSlots().catch(() => {}); // else the next heartbeat tries again
      void replaceSlot();
    });
    runners.add(entry);
    try {
      entry.runner = await gw.run({
        pgPool: pool as never,
        concurrency,
        noHandleSignals: true,
        pollInterval: 1000,
        taskList: { [QUEUE_TASK]: task as never },
        events: events as never,
        logger: await quietLogger(),
      });
    } catch (e) {
      runners.delete(entry);
      throw e;
    }
    // A pool that ends by itself (not asked to): the worker stops, for its supervisor to restart it.
    entry.runner.promise.then(
      () => {
        if (!stopping && runners.has(entry) && entry.live > 0) void stop();
      },
      (e: unknown) => {
        if (stopping) return;
        say(`the job queue failed: ${String(e)}; stopping`);
        void stop();
      },
    );
  };
  /** Starts one slot in place of a dead one, retrying while the database is away (1 s doubling to 30 s). */
  const replaceSlot = async () => {
    for (let wait = 1000; !stopping; wait = Math.min(wait * 2, 30_000)) {
      try {
        await startRunner(1);
        say('a new job slot replaces the dead one');
        return;
      } catch (e) {
        say(`could not start a job slot (retrying in ${wait} ms): ${String(e)}`);
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  };

  let timer: ReturnType<typeof setInterval> | undefined;
  function stop(): Promise<void> {
    return (stopping ??= (async () => {
      clearInterval(timer);
      await Promise.all([...runners].map((r) => r.runner?.stop().catch(() => {})));
      await leaveWorkers(pool, id).catch(() => {});
      resolveDone();
    })());
  }
  await startRunner(o.concurrency ?? 4);
  await beat();
  timer = setInterval(() => void beat(), Math.max(50, Math.floor(leaseMs / 3)));
  return { id, stop, done };
}
