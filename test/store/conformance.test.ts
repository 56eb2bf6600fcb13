/**
 * Issue 16 item 3: the session store conformance suite, one file run against both backends (JSONL
 * files with lock-file leases; Postgres through pg). What it pins: conditional appends (expected
 * `seq`, all or nothing), the writer lease (one live holder, fencing tokens that grow, expiry,
 * renewal, release), exact round trips, and that a runtime on a stored session runs no tool body
 * before its `tool/call` is in the store, and none at all once its lease is gone.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/scriptedModel.js';
import { ErrorCode, type LogEvent } from '../../src/protocol/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { StoreConflictError, type SessionStore } from '../../src/runtime/store/sessionStore.js';
import { openStoredSession, openStoredSessionLog } from '../../src/runtime/store/storedSession.js';
import { backends, freshSession } from './backends.js';

const ev = (seq: number, extra: Partial<{ message: string }> = {}): LogEvent =>
  ({ seq, time: 1_700_000_000_000 + seq, type: 'warning', code: 'TEST', message: extra.message ?? `event ${seq}` }) as LogEvent;
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ev(from + i));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const conflict = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e, 'refused with a StoreConflictError').toBeInstanceOf(StoreConflictError);
  return (e as StoreConflictError).code;
};

describe.each(backends)('session store conformance: $name', (backend) => {
  const opened: SessionStore[] = [];
  const world = backend.world();
  const open = async () => {
    const s = await world.open();
    opened.push(s);
    return s;
  };
  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
  });
  // In CI every Postgres test runs: test/store/pgGlobalSetup.ts fails the run without a database.
  const test = backend.unavailable ? it.skip : it;

  test('an unknown session is empty', async () => {
    const s = await open();
    const id = freshSession('empty');
    expect(await s.read(id)).toEqual([]);
    expect(await s.lastSeq(id)).toBe(0);
  });

  test('appends are conditional on the expected seq, all or nothing, and read back exactly', async () => {
    const s = await open();
    const id = freshSession('append');
    const lease = (await s.acquire(id, 'w1', 30_000))!;
    expect(lease.token).toBeGreaterThanOrEqual(1);
    const odd: LogEvent = { ...ev(1), message: 'ünïcödé \u2028 "quotes" \\ \u0000 🚀' } as LogEvent;
    await s.append(lease, 0, [odd, ...range(2, 3)]);
    expect(await s.read(id)).toEqual([odd, ...range(2, 3)]);
    expect(await s.lastSeq(id)).toBe(3);
    // A stale expectation: refused, nothing written.
    expect(await conflict(s.append(lease, 2, [ev(3)]))).toBe('SEQ_CONFLICT');
    expect(await conflict(s.append(lease, 5, [ev(6)]))).toBe('SEQ_CONFLICT');
    // Events that do not go on from the expected seq: refused, nothing written (not even the good one).
    expect(await conflict(s.append(lease, 3, [ev(4), ev(6)]))).toBe('SEQ_CONFLICT');
    expect(await s.lastSeq(id)).toBe(3);
    await s.append(lease, 3, range(4, 5));
    expect((await s.read(id, 4)).map((e) => e.seq)).toEqual([4, 5]);
    // Another instance (another process's view) sees the same events and the same last seq.
    const other = await open();
    expect(await other.read(id)).toEqual([odd, ...range(2, 5)]);
    expect(await other.lastSeq(id)).toBe(5);
  });

  test('two appends racing on the same expected seq from two instances: exactly one lands, no duplicate', async () => {
    const a = await open();
    const b = await open();
    const id = freshSession('race');
    const lease = (await a.acquire(id, 'w1', 30_000))!;
    await a.append(lease, 0, range(1, 3));
    for (let round = 0; round < 5; round++) {
      const last = await a.lastSeq(id);
      const results = await Promise.allSettled([a.append(lease, last, range(last + 1, last + 2)), b.append(lease, last, range(last + 1, last + 3))]);
      const ok = results.filter((r) => r.status === 'fulfilled');
      expect(ok, `round ${round}`).toHaveLength(1);
      const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(failed.reason).toBeInstanceOf(StoreConflictError);
      expect((failed.reason as StoreConflictError).code).toBe('SEQ_CONFLICT');
    }
    const seqs = (await b.read(id)).map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
  });

  test('one live lease: another owner is refused; the holder re-acquires with the same token', async () => {
    const a = await open();
    const b = await open();
    const id = freshSession('lease');
    const l1 = (await a.acquire(id, 'w1', 30_000))!;
    expect(await b.acquire(id, 'w2', 30_000)).toBeUndefined();
    const again = (await b.acquire(id, 'w1', 30_000))!;
    expect(again.token).toBe(l1.token);
    // w2 holds no lease: its appends are fenced off.
    expect(await conflict(b.append({ ...l1, owner: 'w2' }, 0, [ev(1)]))).toBe('LEASE_LOST');
    expect(await conflict(b.append({ ...l1, token: l1.token + 1 }, 0, [ev(1)]))).toBe('LEASE_LOST');
    expect(await a.lastSeq(id)).toBe(0);
  });

  test('release: the next holder gets a greater token and the old lease can neither append nor renew', async () => {
    const a = await open();
    const b = await open();
    const id = freshSession('release');
    const l1 = (await a.acquire(id, 'w1', 30_000))!;
    await a.append(l1, 0, range(1, 2));
    await a.release(l1);
    const l2 = (await b.acquire(id, 'w2', 30_000))!;
    expect(l2.token).toBeGreaterThan(l1.token);
    expect(await conflict(a.append(l1, 2, [ev(3)]))).toBe('LEASE_LOST');
    expect(await conflict(a.renew(l1, 30_000))).toBe('LEASE_LOST');
    await b.append(l2, 2, [ev(3)]);
    expect((await a.read(id)).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  test('expiry: a lease not renewed in time is taken over, and its holder is fenced off', async () => {
    const a = await open();
    const b = await open();
    const id = freshSession('expiry');
    const l1 = (await a.acquire(id, 'dead', 300))!;
    await a.append(l1, 0, [ev(1)]);
    await sleep(700);
    const l2 = (await b.acquire(id, 'alive', 30_000))!;
    expect(l2).toBeDefined();
    expect(l2.token).toBeGreaterThan(l1.token);
    expect(await conflict(a.append(l1, 1, [ev(2)]))).toBe('LEASE_LOST');
    expect(await conflict(a.renew(l1, 30_000))).toBe('LEASE_LOST');
    await b.append(l2, 1, [ev(2)]);
    expect(await b.lastSeq(id)).toBe(2);
  });

  test('renewal keeps a lease alive past its first expiry', async () => {
    const a = await open();
    const b = await open();
    const id = freshSession('renew');
    const l1 = (await a.acquire(id, 'w1', 400))!;
    const l2 = await a.renew(l1, 60_000);
    expect(l2.token).toBe(l1.token);
    expect(l2.expiresAt).toBeGreaterThan(l1.expiresAt);
    await sleep(800);
    expect(await b.acquire(id, 'w2', 30_000)).toBeUndefined();
    await a.append(l2, 0, [ev(1)]);
  });

  test('of many owners taking an expired lease at once, exactly one gets it', async () => {
    const stores = await Promise.all([open(), open(), open(), open()]);
    const id = freshSession('takeover');
    await stores[0]!.acquire(id, 'gone', 200);
    await sleep(500);
    const got = (await Promise.all(stores.map((s, i) => s.acquire(id, `w${i}`, 30_000)))).filter((l) => l !== undefined);
    expect(got).toHaveLength(1);
  });

  test('a session id is a name, never a path or an injection', async () => {
    const s = await open();
    for (const bad of ['../escape', '.hidden', 'a/b', '', "x'; DROP TABLE dsh.events; --", 'x'.repeat(200)]) {
      await expect(s.acquire(bad, 'w', 1000), bad).rejects.toThrow(/not a session id/);
      await expect(s.read(bad), bad).rejects.toThrow(/not a session id/);
    }
  });

  test('a runtime on a stored session: each tool body finds its tool/call already in the store', async () => {
    const s = await open();
    const observer = await open();
    const id = freshSession('durable');
    const session = await openStoredSession(s, id, { owner: 'w1', ttlMs: 30_000 });
    const { log } = session;
    const seen: Record<string, string[]> = {};
    const probe = defineTool({
      name: 'probe',
      description: 'records which tool/calls are in the store when its body starts',
      input: z.object({ n: z.number() }),
      isConcurrencySafe: () => true,
      execute: async (_a, exec) => {
        seen[exec.callId] = (await observer.read(id)).flatMap((e) => (e.type === 'tool/call' ? [e.callId] : []));
        return 'ok';
      },
    });
    const rt = createRuntime({ tools: [probe], log });
    const model = scriptedModel([{ toolCalls: [0, 1, 2].map((n) => ({ toolName: 'probe', input: { n } })) }, { text: 'done' }]);
    expect((await rt.startTurn({ model, input: 'go' }).done).outcome).toBe('completed');
    await session.close();
    const calls = log.events().flatMap((e) => (e.type === 'tool/call' ? [e.callId] : []));
    expect(calls).toHaveLength(3);
    for (const c of calls) expect(seen[c], c).toContain(c);
    // Everything the runtime logged is in the store, in order.
    expect(await observer.read(id)).toEqual(log.events());
  });

  test('openStoredSession: one writer at a time; close() makes its writes durable and lets the lease go', async () => {
    const s = await open();
    const id = freshSession('held');
    const first = await openStoredSession(s, id, { owner: 'w1', ttlMs: 30_000 });
    first.log.append({ type: 'warning', code: 'TEST', message: 'written by the first' });
    expect(await conflict(openStoredSession(s, id, { owner: 'w2', ttlMs: 30_000 }))).toBe('LEASE_HELD');
    await first.close();
    await first.close(); // a second close changes nothing
    const second = await openStoredSession(s, id, { owner: 'w2', ttlMs: 30_000 });
    expect(second.log.events().map((e) => e.type === 'warning' && e.message)).toEqual(['written by the first']);
    second.log.append({ type: 'warning', code: 'TEST', message: 'and by the second' });
    await second.close();
    expect((await s.read(id)).map((e) => e.type === 'warning' && e.message)).toEqual(['written by the first', 'and by the second']);
  });

  test('a writer whose lease was taken over runs no further tool body: its calls settle ABORTED_BEFORE_DISPATCH', async () => {
    const s = await open();
    const thief = await open();
    const id = freshSession('fenced');
    const lease = (await s.acquire(id, 'slow', 300))!;
    const { log } = await openStoredSessionLog(s, { lease });
    let ran = 0;
    const tool = defineTool({ name: 'side', description: 'a side effect', input: z.object({}), execute: async () => (ran++, 'ran') });
    const rt = createRuntime({ tools: [tool], log });
    await sleep(700);
    expect(await thief.acquire(id, 'thief', 30_000)).toBeDefined();
    const r = await rt.runCall({ callId: 'c1', toolName: 'side', input: {} }).result;
    expect(ran).toBe(0);
    expect(r.isError).toBe(true);
    expect(r.isError && r.error?.code).toBe(ErrorCode.ABORTED_BEFORE_DISPATCH);
    expect(await thief.lastSeq(id)).toBe(0);
  });
});
