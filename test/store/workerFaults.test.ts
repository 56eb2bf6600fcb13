/**
 * Issue 24 items 1 and 5: `dsh worker` processes against a Postgres that restarts, and many
 * workers starting together on a fresh database. Real worker processes, a real server of this
 * test's own (scripts/throwawayPostgres.ts: restarted fast and immediate), bounds only catch hangs.
 *
 * - a restart while tool bodies run, with the database away longer than the bodies (each turn
 *   then fails to record its end, and graphile-worker's job slot dies with its job locked): no
 *   session stays stuck; every turn ends (completed, or failed with its reason logged), every
 *   call is paired, and turns submitted after the restart run;
 * - 8 workers started at once on a fresh database: all start (no install race).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPostgresBin, startThrowawayPostgres, type ThrowawayPostgres } from '../../scripts/throwawayPostgres.js';
import { migrateTurnQueue, submitTurn } from '../../src/adapters/store/pgQueue.js';
import { openPostgresStore, type PostgresSessionStore } from '../../src/adapters/store/pgStore.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { startDsh } from '../cli/spawnDsh.js';

const HANG = 420_000;
const test = findPostgresBin() ? it : it.skip;
let server: ThrowawayPostgres | undefined;
const stores: PostgresSessionStore[] = [];
const children: Array<ReturnType<typeof startDsh>> = [];
const dirs: string[] = [];

beforeAll(async () => {
  if (findPostgresBin()) server = await startThrowawayPostgres();
}, 180_000);
afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  await Promise.all(stores.map((s) => s.close().catch(() => {})));
  await server?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}, 120_000);

let n = 0;
async function freshDatabase(): Promise<string> {
  const name = `f_${process.pid}_${++n}`;
  const admin = new pg.Client({ connectionString: server!.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(server!.url);
  url.pathname = `/${name}`;
  return url.toString();
}

const worker = (cwd: string, url: string, ...extra: string[]) => {
  const w = startDsh(cwd, ['worker', '--database', url, '--workspaces', join(cwd, 'ws'), ...extra]);
  children.push(w);
  let err = '';
  const running = new Promise<void>((resolve, reject) => {
    w.child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (/ running \(concurrency/.test(err)) resolve();
    });
    w.child.once('exit', (code, signal) => reject(new Error(`dsh worker exited (${code ?? signal}) before running: ${err}`)));
  });
  running.catch(() => {});
  return { ...w, running, err: () => err };
};

/** Polls `check` (a failed check, the database being away, counts as not yet). */
async function until<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 240_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** seq 1..n, every tool/call answered once, every turn ended once. */
function expectWellFormed(events: readonly LogEvent[], what: string) {
  expect(events.map((e) => e.seq), `${what}: seqs`).toEqual(events.map((_, i) => i + 1));
  const calls = events.filter((e) => e.type === 'tool/call');
  const answered = events.flatMap((e) => (e.type === 'tool/result' ? e.sourceEventSeqs : []));
  expect([...answered].sort((a, b) => a - b), `${what}: every call answered once`).toEqual(calls.map((c) => c.seq));
  const starts = events.filter((e) => e.type === 'turn/start').map((e) => e.turnId);
  const ends = events.filter((e) => e.type === 'turn/end').map((e) => e.turnId);
  expect(ends, `${what}: every turn ended once`).toEqual(starts);
}

describe('dsh worker while Postgres restarts', () => {
  for (const mode of ['fast', 'immediate'] as const) {
    test(
      `a ${mode} restart while bodies run, the database away longer than the bodies: no session stuck, later submits run`,
      async () => {
        const url = await freshDatabase();
        const dir = mkdtempSync(join(tmpdir(), 'dsh-restart-'));
        dirs.push(dir);
        const store = await openPostgresStore({ connectionString: url, maxConnections: 4 });
        stores.push(store);
        await migrateTurnQueue(store.pool);
        const script = join(dir, 'script.json');
        writeFileSync(script, JSON.stringify([{ toolCalls: [{ toolName: 'bash', input: { command: 'sleep 1; echo slept' } }] }, { text: 'done' }]));
        const w = worker(dir, url, '--model', `scripted:${script}`, '--allow', 'bash', '--lease-ms', '3000', '--concurrency', '4');
        await w.running;
        const sessions = Array.from({ length: 6 }, (_, i) => `r${mode}-${i}`);
        for (const s of sessions) await submitTurn(store.pool, s, `first ${s}`);
        // Bodies are running (their calls are in the store): the server goes away for 4 s.
        await until(async () => {
          const r = await store.pool.query(`SELECT count(DISTINCT session_id)::int AS n FROM dsh.events WHERE event LIKE '%"type":"tool/call"%'`);
          return r.rows[0].n >= 2;
        }, 'two bodies running');
        await server!.restart(mode, 4000);
        // After the restart: a second turn for every session.
        for (const s of sessions) await until(async () => submitTurn(store.pool, s, `second ${s}`), `the second submit of ${s}`);
        const ended = async (s: string) => (await store.read(s)).filter((e) => e.type === 'turn/end').length >= 2;
        await until(async () => (await Promise.all(sessions.map(ended))).every(Boolean), 'every session to end both its turns').catch((e: Error) => {
          throw new Error(`${e.message}\nworker stderr:\n${w.err().slice(-4000)}`, { cause: e });
        });
        const outcomes: string[] = [];
        for (const s of sessions) {
          const events = await store.read(s);
          expectWellFormed(events, s);
          const ends = events.flatMap((e) => (e.type === 'turn/end' ? [e] : []));
          expect(events.filter((e) => e.type === 'turn/start').map((e) => (e.type === 'turn/start' ? e.input : ''))).toEqual([`first ${s}`, `second ${s}`]);
          // The first turn completed, or failed with its reason in the log; the second ran after the restart.
          expect(['completed', 'failed']).toContain(ends[0]!.outcome);
          if (ends[0]!.outcome === 'failed') expect(ends[0]!.error, s).toBeTruthy();
          expect(ends[1]!.outcome, s).toBe('completed');
          outcomes.push(ends[0]!.outcome);
        }
        process.stderr.write(`${mode} restart: first turns ${outcomes.join(', ')}; worker said:\n${w.err().split('\n').filter((l) => /slot|heartbeat/.test(l)).slice(0, 12).join('\n')}\n`);
        w.child.kill('SIGTERM');
        const done = await w.done;
        expect(done.code, done.err.slice(-2000)).toBe(0);
      },
      HANG,
    );
  }

  test(
    '8 workers started at once on a fresh database: all start',
    async () => {
      const url = await freshDatabase();
      const dir = mkdtempSync(join(tmpdir(), 'dsh-start8-'));
      dirs.push(dir);
      const ws = Array.from({ length: 8 }, () => worker(dir, url, '--concurrency', '1'));
      const settled = await Promise.allSettled(ws.map((w) => w.running));
      const failed = settled.flatMap((r) => (r.status === 'rejected' ? [String(r.reason).slice(0, 600)] : []));
      expect(failed).toEqual([]);
      for (const w of ws) w.child.kill('SIGTERM');
      const codes = await Promise.all(ws.map((w) => w.done.then((d) => d.code)));
      expect(codes).toEqual(Array(8).fill(0));
    },
    HANG,
  );
});
