/**
 * A writer that stops inside an append, for frozenWriter.test.ts (run with tsx):
 *
 *   frozenAppender.ts URL SESSION TTL_MS
 *
 * Takes the session's lease, appends event 1, then starts the append of event 2 and, once its
 * transaction holds the lease row (`FOR SHARE`), prints {"inside":PID} and waits 1 s before the
 * insert (the test SIGSTOPs it there). Prints {"appended":true|false,"error":…} when the append
 * settles, then exits.
 */
import { createPostgresStore, openPostgresStore, type PgClientLike, type PgPoolLike } from '../../src/adapters/store/pgStore.js';
import type { LogEvent } from '../../src/protocol/index.js';

const [url, sessionId, ttl] = process.argv.slice(2) as [string, string, string];
const ttlMs = Number(ttl);
const opened = await openPostgresStore({ connectionString: url, maxConnections: 2 });
let pauseArmed = false;
const pool: PgPoolLike = {
  query: (t, v) => opened.pool.query(t, v),
  end: () => opened.pool.end(),
  async connect() {
    const c = await opened.pool.connect();
    return Object.assign(Object.create(c) as typeof c, {
      async query(text: string, values?: unknown[]) {
        const r = await c.query(text, values);
        if (pauseArmed && /FOR SHARE/.test(text)) {
          pauseArmed = false;
          process.stdout.write(`${JSON.stringify({ inside: process.pid })}\n`);
          await new Promise((res) => setTimeout(res, 1000));
        }
        return r;
      },
      release: () => c.release(),
      on: (e: string, f: () => void) => (c as unknown as { on(e: string, f: () => void): void }).on(e, f),
      off: (e: string, f: () => void) => (c as unknown as { off(e: string, f: () => void): void }).off(e, f),
    }) as PgClientLike & { release(): void };
  },
};
const store = createPostgresStore(pool);
const ev = (seq: number): LogEvent => ({ seq, time: Date.now(), type: 'warning', code: 'FROZEN', message: `frozen writer event ${seq}` }) as LogEvent;
const lease = await store.acquire(sessionId, 'frozen-writer', ttlMs);
if (!lease) throw new Error('no lease');
await store.append(lease, 0, [ev(1)]);
pauseArmed = true;
try {
  await store.append(lease, 1, [ev(2)]);
  process.stdout.write(`${JSON.stringify({ appended: true })}\n`);
} catch (e) {
  process.stdout.write(`${JSON.stringify({ appended: false, error: String((e as Error).message ?? e) })}\n`);
}
await opened.pool.end().catch(() => {});
process.exit(0);
