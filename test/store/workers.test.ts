/**
 * Issue 16 item 4: many sessions across worker processes on Postgres. Real `dsh worker` processes
 * (from source) on a real database; bounds only catch hangs.
 *
 * - two writers race for one session: exactly one runs its turns, no gap, no duplicate seq;
 * - a worker SIGKILLed while a tool body runs: another worker takes the session over once the lease
 *   expires, closes the call INTERRUPTED as `dsh resume` does, runs the next turn; every call is
 *   paired and everything committed before the kill is still there, unchanged;
 * - 200 sessions across 2 worker processes all complete with valid logs.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateTurnQueue, pendingTurns, submitTurn } from '../../src/adapters/store/pgQueue.js';
import { openPostgresStore, type PostgresSessionStore } from '../../src/adapters/store/pgStore.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { runPendingTurns } from '../../src/runtime/store/sessionTurns.js';
import { scriptedModel } from '../../src/adapters/model/scriptedModel.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { startDsh, waitFor } from '../cli/spawnDsh.js';
import { pgUrl } from './backends.js';
import { freshDatabase } from './pgTestDb.js';

const HANG = 300_000;
const test = pgUrl() ? it : it.skip;
const stores: PostgresSessionStore[] = [];
const children: Array<ReturnType<typeof startDsh>> = [];
afterAll(async () => {
  for (const c of children) if (c.child.exitCode === null) c.child.kill('SIGKILL');
  await Promise.all(stores.map((s) => s.close()));
});

const openStore = async (url: string, max = 4) => {
  const s = await openPostgresStore({ connectionString: url, maxConnections: max });
  stores.push(s);
  return s;
};

/** A well-formed log: seq 1..n, every tool/call answered once, every step and turn closed. */
function expectWellFormed(events: readonly LogEvent[], what: string) {
  expect(events.map((e) => e.seq), `${what}: seqs`).toEqual(events.map((_, i) => i + 1));
  const calls = events.filter((e) => e.type === 'tool/call');
  const answered = events.flatMap((e) => (e.type === 'tool/result' ? e.sourceEventSeqs : []));
  expect([...answered].sort((a, b) => a - b), `${what}: every call answered once`).toEqual(calls.map((c) => c.seq));
  const starts = events.filter((e) => e.type === 'turn/start').map((e) => e.turnId);
  const ends = events.filter((e) => e.type === 'turn/end').map((e) => e.turnId);
  expect(ends, `${what}: every turn ended once`).toEqual(starts);
}

/** Raw check in the table: no duplicate and no missing seq for the session. */
async function rawSeqs(url: string, sessionId: string): Promise<{ count: number; distinct: number; max: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query(`SELECT count(*)::int AS count, count(DISTINCT seq)::int AS distinct, coalesce(max(seq), 0)::int AS max FROM dsh.events WHERE session_id = $1`, [sessionId]);
    return r.rows[0];
  } finally {
    await c.end();
  }
}

/** A `dsh worker` process; `running` settles once it says it runs (a SIGTERM before that is a kill). */
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
  return { ...w, running };
};

const scriptFile = (dir: string, steps: unknown[]) => {
  const file = join(dir, `script-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(steps));
  return file;
};

async function turnEnds(store: PostgresSessionStore, sessionId: string) {
  return (await store.read(sessionId)).filter((e) => e.type === 'turn/end');
}

async function until<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = HANG - 30_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('sessions across workers on Postgres', () => {
  test(
    'two writers race for one session: exactly one runs the turns, with no gap and no duplicate seq',
    async () => {
      const url = await freshDatabase();
      const a = await openStore(url);
      const b = await openStore(url);
      await migrateTurnQueue(a.pool);
      const sessionId = 'raced';
      for (const m of ['one', 'two', 'three']) await submitTurn(a.pool, sessionId, m);
      const model = () => scriptedModel([{ toolCalls: [{ toolName: 'echo', input: {} }] }, { text: 'done' }]);
      const { defineTool } = await import('../../src/runtime/defineTool.js');
      const { z } = await import('zod');
      const echo = defineTool({ name: 'echo', description: 'echo', input: z.object({}), isConcurrencySafe: () => true, execute: async () => 'echo' });
      const ranBy: string[] = [];
      const racer = (store: PostgresSessionStore, owner: string) =>
        runPendingTurns({
          store,
          sessionId,
          owner,
          ttlMs: 30_000,
          waitMs: HANG,
          pending: (started) => pendingTurns(store.pool, sessionId, started),
          runTurn: async (log, turn) => {
            ranBy.push(`${owner}:${turn.n}`);
            const rt = createRuntime({ log, tools: [echo] });
            expect((await rt.startTurn({ model: model(), input: turn.message }).done).outcome).toBe('completed');
          },
        });
      const [ra, rb] = await Promise.all([racer(a, 'writer-a'), racer(b, 'writer-b')]);
      // One of them ran all three turns; the other, once it got the lease, found nothing left.
      expect(ra.ran + rb.ran).toBe(3);
      expect([ra.ran, rb.ran].sort()).toEqual([0, 3]);
      expect(new Set(ranBy.map((r) => r.split(':')[0])).size).toBe(1);
      const events = await a.read(sessionId);
      expectWellFormed(events, 'raced session');
      expect(events.filter((e) => e.type === 'turn/start').map((e) => (e.type === 'turn/start' ? e.input : ''))).toEqual(['one', 'two', 'three']);
      const raw = await rawSeqs(url, sessionId);
      expect(raw).toEqual({ count: events.length, distinct: events.length, max: events.length });
    },
    HANG,
  );

  test(
    'two worker processes, turns submitted to one session from two submitters at once: in order, one at a time, no gap, no duplicate',
    async () => {
      const url = await freshDatabase();
      const dir = mkdtempSync(join(tmpdir(), 'dsh-workers-'));
      const store = await openStore(url);
      await migrateTurnQueue(store.pool);
      const script = scriptFile(dir, [{ toolCalls: [{ toolName: 'glob', input: { pattern: '*' } }] }, { text: 'ok' }]);
      const w1 = worker(dir, url, '--model', `scripted:${script}`, '--concurrency', '2');
      const w2 = worker(dir, url, '--model', `scripted:${script}`, '--concurrency', '2');
      const other = await openStore(url);
      const submitted = await Promise.all([...Array(4)].flatMap((_, i) => [submitTurn(store.pool, 'shared', `a${i}`), submitTurn(other.pool, 'shared', `b${i}`)]));
      expect(submitted.map((s) => s.n).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      await until(async () => (await turnEnds(store, 'shared')).length >= 8, '8 turns of the shared session');
      const events = await store.read('shared');
      expectWellFormed(events, 'shared session');
      // Turns ran in the order of their numbers, each completed.
      const byN = new Map(submitted.map((s, i) => [s.n, i % 2 === 0 ? `a${i / 2}` : `b${(i - 1) / 2}`]));
      expect(events.flatMap((e) => (e.type === 'turn/start' ? [e.input] : []))).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => byN.get(n)));
      expect(events.flatMap((e) => (e.type === 'turn/end' ? [e.outcome] : []))).toEqual(Array(8).fill('completed'));
      const raw = await rawSeqs(url, 'shared');
      expect(raw).toEqual({ count: events.length, distinct: events.length, max: events.length });
      await Promise.all([w1.running, w2.running]);
      w1.child.kill('SIGTERM');
      w2.child.kill('SIGTERM');
      expect((await w1.done).code).toBe(0);
      expect((await w2.done).code).toBe(0);
    },
    HANG,
  );

  test(
    'a worker SIGKILLed while a tool body runs: another worker takes the session over, closes the call INTERRUPTED and finishes; nothing committed is lost',
    async () => {
      const url = await freshDatabase();
      const dir = mkdtempSync(join(tmpdir(), 'dsh-kill-'));
      const store = await openStore(url);
      await migrateTurnQueue(store.pool);
      // Turn 1 runs a command that waits (until the marker exists); turn 2 runs it again, quickly.
      const script = scriptFile(dir, [
        { text: 'running the slow command', toolCalls: [{ toolName: 'bash', input: { command: 'for i in $(seq 1 600); do [ -e killed ] && break; sleep 0.1; done; echo finished' } }] },
        { text: 'all done' },
      ]);
      const args = ['--model', `scripted:${script}`, '--allow', 'bash', '--lease-ms', '2000'];
      const a = worker(dir, url, ...args);
      await submitTurn(store.pool, 'victim', 'first');
      await submitTurn(store.pool, 'victim', 'second');
      // The body runs once its tool/call is in the store.
      await until(async () => (await store.read('victim')).some((e) => e.type === 'tool/call'), 'the tool/call in the store');
      await waitFor(() => a.child.exitCode === null && true, 'worker a alive');
      const committed = await store.read('victim');
      a.child.kill('SIGKILL');
      expect((await a.done).signal).toBe('SIGKILL');
      writeFileSync(join(dir, 'ws', 'victim', 'killed'), '');
      const b = worker(dir, url, ...args);
      await until(async () => (await turnEnds(store, 'victim')).length >= 2, 'both turns of the victim session ended').catch(async (e: Error) => {
        b.child.kill('SIGKILL');
        const [ra, rb] = [await a.done, await b.done];
        throw new Error(`${e.message}\nworker a stderr:\n${ra.err.slice(-2000)}\nworker b stderr:\n${rb.err.slice(-2000)}`, { cause: e });
      });
      const events = await store.read('victim');
      expectWellFormed(events, 'victim');
      // What was committed before the kill is all there, unchanged, at the same seqs.
      expect(events.slice(0, committed.length)).toEqual(committed);
      const call = committed.find((e) => e.type === 'tool/call')!;
      const result = events.find((e) => e.type === 'tool/result' && e.sourceEventSeqs.includes(call.seq));
      expect(result?.type === 'tool/result' && result.result.isError && result.result.error?.code).toBe('INTERRUPTED');
      const ends = events.filter((e) => e.type === 'turn/end');
      expect(ends.map((e) => (e.type === 'turn/end' ? e.outcome : ''))).toEqual(['failed', 'completed']);
      expect(ends[0]?.type === 'turn/end' && ends[0].error).toBe('the session stopped before this finished (closed on resume)');
      await b.running;
      b.child.kill('SIGTERM');
      const bRun = await b.done;
      expect(bRun.code).toBe(0);
      expect(bRun.err).toMatch(/session victim: taken over: 1 call\(s\) marked INTERRUPTED/);
      expect(existsSync(join(dir, 'ws', 'victim'))).toBe(true);
    },
    HANG,
  );

  test(
    '200 sessions across 2 worker processes all complete, with valid logs',
    async () => {
      const url = await freshDatabase();
      const dir = mkdtempSync(join(tmpdir(), 'dsh-many-'));
      const store = await openStore(url, 8);
      await migrateTurnQueue(store.pool);
      const script = scriptFile(dir, [{ toolCalls: [{ toolName: 'glob', input: { pattern: '*' } }] }, { text: 'ok' }]);
      const w1 = worker(dir, url, '--model', `scripted:${script}`, '--concurrency', '8');
      const w2 = worker(dir, url, '--model', `scripted:${script}`, '--concurrency', '8');
      const ids = Array.from({ length: 200 }, (_, i) => `many-${i}`);
      for (let i = 0; i < ids.length; i += 20) await Promise.all(ids.slice(i, i + 20).map((id) => submitTurn(store.pool, id, `hello ${id}`)));
      await until(async () => {
        const r = await store.pool.query(`SELECT count(*)::int AS n FROM dsh.events WHERE event LIKE '%"type":"turn/end"%'`);
        return r.rows[0].n >= 200;
      }, '200 sessions ended');
      for (const id of ids) {
        const events = await store.read(id); // validated against the event schema
        expectWellFormed(events, id);
        expect(events.flatMap((e) => (e.type === 'turn/end' ? [e.outcome] : [])), id).toEqual(['completed']);
      }
      await Promise.all([w1.running, w2.running]);
      w1.child.kill('SIGTERM');
      w2.child.kill('SIGTERM');
      const [r1, r2] = await Promise.all([w1.done, w2.done]);
      expect(r1.code).toBe(0);
      expect(r2.code).toBe(0);
      const ran = (r: { err: string }) => (r.err.match(/turn 1 completed/g) ?? []).length;
      expect(ran(r1) + ran(r2)).toBe(200);
    },
    HANG,
  );
});
