/**
 * Session store rows (issue 16): the latency of one durable conditional append (one event, the
 * size of a tool/call) on Postgres against JSONL, and turns per second through the Postgres queue
 * with 1 and with 2 `dsh worker` processes (the ratio is what a second worker adds on this machine).
 *
 * Postgres: `DSH_BENCH_PG_URL`, else a throwaway cluster with its durability settings on
 * (scripts/throwawayPostgresServe.ts --durable, started through tsx). Not measured (a reason
 * instead of numbers) when no PostgreSQL is installed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createJsonlStore } from '../../src/adapters/store/jsonlStore.js';
import { migrateTurnQueue, submitTurn } from '../../src/adapters/store/pgQueue.js';
import { openPostgresStore, type PgPoolLike } from '../../src/adapters/store/pgStore.js';
import type { LogEvent } from '../../src/protocol/index.js';
import type { SessionStore } from '../../src/runtime/store/sessionStore.js';
import { median, nowMs } from '../lib/stats.js';

export interface StoreResult {
  /** Median µs of one awaited, durable, conditional append of one event. */
  appendUsPostgres: number;
  appendUsJsonl: number;
  /** Turns per second through the queue: 1 worker, 2 workers, and 2 ÷ 1. */
  turnsPerSec1: number;
  turnsPerSec2: number;
  workersRatio: number;
}

export interface StoreDetail {
  appends: number;
  turns: number;
  workerConcurrency: number;
  database: string;
}

const callEvent = (seq: number): LogEvent =>
  ({ seq, time: 1_764_000_000_000 + seq, type: 'tool/call', turnId: 'turn-1', stepIndex: 0, callId: `call-${seq}`, toolName: 'read', input: '{"path":"src/file.ts"}', index: 0, executionMode: 'parallel' }) as LogEvent;

async function appendLatencyUs(store: SessionStore, n: number): Promise<number> {
  const id = `bench-append-${process.pid}-${Date.now().toString(36)}`;
  const lease = (await store.acquire(id, 'bench', 600_000))!;
  const samples: number[] = [];
  for (let seq = 1; seq <= n; seq++) {
    const t0 = nowMs();
    await store.append(lease, seq - 1, [callEvent(seq)]);
    samples.push((nowMs() - t0) * 1000);
  }
  await store.release(lease);
  return median(samples.slice(Math.floor(n / 10))); // the first tenth is warm-up
}

/** The repository's throwaway Postgres, as a child process; resolves with its URL and a stopper. */
async function throwawayServer(root: string): Promise<{ url: string; stop: () => Promise<void> } | { reason: string }> {
  const script = join(root, 'scripts', 'throwawayPostgresServe.ts');
  const loader = join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs');
  if (!existsSync(script) || !existsSync(loader)) return { reason: 'scripts/throwawayPostgresServe.ts or tsx missing' };
  const child: ChildProcess = spawn(process.execPath, ['--import', pathToFileURL(loader).href, script, '--durable'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string | undefined>((resolve) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]!.trim());
    });
    child.once('exit', () => resolve(undefined));
  });
  if (!url) return { reason: `no PostgreSQL here: ${err.trim().split('\n').at(-1) ?? 'the server did not start'}` };
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function createDatabase(pool: PgPoolLike, base: string, name: string): Promise<string> {
  await pool.query(`CREATE DATABASE ${name}`);
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Turns per second with `workers` dsh worker processes on a fresh database. */
async function turnsPerSecond(o: { admin: PgPoolLike; base: string; workers: number; sessions: number; turnsEach: number; concurrency: number; bin: string[]; dir: string; tag: string }): Promise<number> {
  const url = await createDatabase(o.admin, o.base, `bench_${o.tag}_${process.pid}_${Date.now().toString(36)}`);
  const store = await openPostgresStore({ connectionString: url, maxConnections: 8 });
  const script = join(o.dir, 'script.json');
  writeFileSync(script, JSON.stringify([{ toolCalls: [{ toolName: 'glob', input: { pattern: '*' } }] }, { text: 'ok' }]));
  const children: ChildProcess[] = [];
  try {
    await migrateTurnQueue(store.pool);
    await Promise.all(
      Array.from({ length: o.workers }, () => {
        const [cmd, ...args] = o.bin;
        const child = spawn(cmd!, [...args, 'worker', '--database', url, '--workspaces', join(o.dir, `ws-${o.tag}`), '--concurrency', String(o.concurrency), '--model', `scripted:${script}`], { stdio: ['ignore', 'ignore', 'pipe'] });
        children.push(child);
        return new Promise<void>((resolve, reject) => {
          let err = '';
          child.stderr!.on('data', (d: Buffer) => {
            err += d.toString();
            if (err.includes(' running (')) resolve();
          });
          child.once('exit', (code) => reject(new Error(`dsh worker exited ${code}: ${err}`)));
        });
      }),
    );
    const total = o.sessions * o.turnsEach;
    const t0 = nowMs();
    for (let t = 0; t < o.turnsEach; t++) {
      await Promise.all(Array.from({ length: o.sessions }, (_, s) => submitTurn(store.pool, `s${s}`, `turn ${t + 1}`)));
    }
    for (;;) {
      const r = await store.pool.query(`SELECT count(*)::int AS n FROM dsh.events WHERE event LIKE '%"type":"turn/end"%'`);
      if (r.rows[0].n >= total) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    return total / ((nowMs() - t0) / 1000);
  } finally {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGTERM');
          }),
      ),
    );
    await store.close();
  }
}

export async function runStore(o: { quick: boolean; root: string; bin: string[]; log: (s: string) => void }): Promise<{ result: StoreResult; detail: StoreDetail } | { notMeasured: string }> {
  let server: { url: string; stop: () => Promise<void> } | undefined;
  let base = process.env.DSH_BENCH_PG_URL;
  if (!base) {
    const s = await throwawayServer(o.root);
    if ('reason' in s) return { notMeasured: s.reason };
    server = s;
    base = s.url;
  }
  const dir = mkdtempSync(join(tmpdir(), 'dsh-bench-store-'));
  try {
    const appends = o.quick ? 200 : 1000;
    o.log(`  store: ${appends} appends each, Postgres and JSONL`);
    const pgStore = await openPostgresStore({ connectionString: base, maxConnections: 2 });
    let appendUsPostgres: number;
    try {
      appendUsPostgres = await appendLatencyUs(pgStore, appends);
    } finally {
      await pgStore.close();
    }
    const jsonl = createJsonlStore({ dir: join(dir, 'jsonl'), fsync: true });
    const appendUsJsonl = await appendLatencyUs(jsonl, appends);
    await jsonl.close();

    const sessions = o.quick ? 20 : 60;
    const turnsEach = 2;
    const concurrency = 4;
    const admin = await openPostgresStore({ connectionString: base, maxConnections: 1 });
    try {
      o.log(`  store: ${sessions * turnsEach} turns with 1 worker`);
      const turnsPerSec1 = await turnsPerSecond({ admin: admin.pool, base, workers: 1, sessions, turnsEach, concurrency, bin: o.bin, dir, tag: 'w1' });
      o.log(`  store: ${sessions * turnsEach} turns with 2 workers`);
      const turnsPerSec2 = await turnsPerSecond({ admin: admin.pool, base, workers: 2, sessions, turnsEach, concurrency, bin: o.bin, dir, tag: 'w2' });
      return {
        result: { appendUsPostgres, appendUsJsonl, turnsPerSec1, turnsPerSec2, workersRatio: turnsPerSec2 / turnsPerSec1 },
        detail: { appends, turns: sessions * turnsEach, workerConcurrency: concurrency, database: server ? 'throwaway cluster, fsync and synchronous_commit on' : 'DSH_BENCH_PG_URL' },
      };
    } finally {
      await admin.close();
    }
  } finally {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The table rows of the store workload. */
export function storeRows(r: StoreResult | null | undefined, note: StoreDetail | { notMeasured: string } | undefined, f: (n: number, d?: number) => string): string[][] {
  if (!r) return note && 'notMeasured' in note ? [['store', 'append latency; turns per second', 'not measured', '—', '', note.notMeasured]] : [];
  const d = note && !('notMeasured' in note) ? note : undefined;
  return [
    ['store append', 'one durable conditional append (1 event): Postgres, JSONL, ratio', `${f(r.appendUsPostgres, 0)} µs, ${f(r.appendUsJsonl, 0)} µs, ×${f(r.appendUsPostgres / r.appendUsJsonl, 2)}`, '—', '', d ? `medians of ${d.appends} appends each (Postgres: ${d.database}; JSONL: write + fsync, lease and seq checked under the append lock)` : ''],
    ['store workers', 'turns per second through the queue: 1 worker, 2 workers, 2 ÷ 1', `${f(r.turnsPerSec1, 1)}, ${f(r.turnsPerSec2, 1)}, **×${f(r.workersRatio, 2)}**`, '—', '', d ? `${d.turns} turns (2 per session, scripted model, a glob each), dsh worker processes with --concurrency ${d.workerConcurrency}, on 2 shared cores` : ''],
  ];
}
