/**
 * Issue 24 item 4: a writer frozen (SIGSTOP) inside a Postgres append's transaction, holding the
 * lease row `FOR SHARE`, cannot keep the session past its lease. A real process, a real signal, a
 * real database; bounds only catch hangs.
 *
 * - another writer takes the session over once the frozen one's lease has expired (the server ends
 *   the frozen transaction at the lease's end; `acquire` retries its lock timeouts meanwhile);
 * - the frozen writer, thawed, writes nothing: its append fails, the store holds the new holder's
 *   events only after the frozen writer's last committed one.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresSessionStore } from '../../src/adapters/store/pgStore.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { testEnv, tsxLoader, waitFor } from '../cli/spawnDsh.js';
import { freshSession, pgUrl } from './backends.js';

const test = pgUrl() ? it : it.skip;
const stores: PostgresSessionStore[] = [];
const children: Array<ReturnType<typeof spawn>> = [];
afterAll(async () => {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGCONT');
      c.kill('SIGKILL');
    }
  }
  await Promise.all(stores.map((s) => s.close()));
});

const TTL = 3000;
const ev = (seq: number, by: string): LogEvent => ({ seq, time: Date.now(), type: 'warning', code: 'TAKEOVER', message: `${by} event ${seq}` }) as LogEvent;

describe('a writer frozen inside an append (Postgres)', () => {
  test('SIGSTOP inside the transaction: another writer takes over after the lease, the thawed one writes nothing', async () => {
    const sessionId = freshSession('frozen');
    const store = await openPostgresStore({ connectionString: pgUrl(), maxConnections: 4 });
    stores.push(store);
    const child = spawn(process.execPath, ['--import', tsxLoader, join(import.meta.dirname, 'frozenAppender.ts'), pgUrl(), sessionId, String(TTL)], {
      env: testEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await waitFor(() => out.includes('"inside"'), `the writer inside its append (${err})`, 60_000);
    child.kill('SIGSTOP');
    const stoppedAt = Date.now();

    // The frozen writer's lock is on the lease row: a takeover's acquire no longer waits on it forever.
    let lease;
    while (!(lease = await store.acquire(sessionId, 'taker', TTL))) {
      if (Date.now() - stoppedAt > 60_000) throw new Error('no takeover within 60 s of the freeze');
      await new Promise((r) => setTimeout(r, 100));
    }
    const tookMs = Date.now() - stoppedAt;
    process.stderr.write(`frozen writer: taken over ${tookMs} ms after SIGSTOP (lease TTL ${TTL} ms)\n`);
    expect(lease.token).toBe(2);
    // What the frozen writer committed before stays; the new holder goes on after it.
    expect((await store.read(sessionId)).map((e) => (e as { message?: string }).message)).toEqual(['frozen-writer event 1'.replace('frozen-writer', 'frozen writer')]);
    await store.append(lease, 1, [ev(2, 'taker'), ev(3, 'taker')]);

    child.kill('SIGCONT');
    expect(await exited, err).toBe(0);
    const result = JSON.parse(out.trim().split('\n').at(-1)!) as { appended: boolean; error?: string };
    expect(result.appended, result.error).toBe(false);
    const events = await store.read(sessionId);
    expect(events.map((e) => `${e.seq}:${(e as { message?: string }).message}`)).toEqual(['1:frozen writer event 1', '2:taker event 2', '3:taker event 3']);
    await store.release(lease);
  }, 180_000);
});
