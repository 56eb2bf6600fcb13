/**
 * What only the JSONL store has to handle: a torn last line left by a writer that died mid-write
 * (the next holder cuts it before appending), and an append lock left by a process that died
 * holding it (broken once stale, so the session does not stay stuck).
 */
import { appendFileSync, existsSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import { createJsonlStore } from '../../src/adapters/store/jsonlStore.js';
import type { LogEvent } from '../../src/protocol/index.js';

const ev = (seq: number): LogEvent => ({ seq, time: 1_700_000_000_000 + seq, type: 'warning', code: 'TEST', message: `event ${seq}` }) as LogEvent;

describe('JSONL session store', () => {
  it('a torn last line is cut by the next holder, and appends go on from the last whole event', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-jstore-'));
    const a = createJsonlStore({ dir, fsync: false });
    const l1 = (await a.acquire('s', 'dead', 30_000))!;
    await a.append(l1, 0, [ev(1), ev(2)]);
    appendFileSync(a.fileOf('s'), '0badc0de {"seq":3,"ty'); // a write cut short by a crash
    await a.release(l1);
    const b = createJsonlStore({ dir, fsync: false });
    const l2 = (await b.acquire('s', 'next', 30_000))!;
    expect(l2.token).toBe(l1.token + 1);
    await b.append(l2, 2, [ev(3)]);
    const { events, torn } = await readJsonlLog(b.fileOf('s'));
    expect(torn).toBeUndefined();
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3]);
    await a.close();
    await b.close();
  });

  it('an append lock left by a dead process is broken once stale; a fresh one is waited for', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-jstore-'));
    const s = createJsonlStore({ dir, fsync: false, staleLockMs: 5_000 });
    const lease = (await s.acquire('s', 'w', 30_000))!;
    const lock = join(dir, 's.append');
    writeFileSync(lock, '99999\n');
    const old = (Date.now() - 60_000) / 1000;
    utimesSync(lock, old, old);
    await s.append(lease, 0, [ev(1)]);
    expect(existsSync(lock)).toBe(false);
    // A live lock (fresh) holds the append back until it is removed.
    writeFileSync(lock, '1\n');
    let landed = false;
    const p = s.append(lease, 1, [ev(2)]).then(() => (landed = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(landed).toBe(false);
    const { unlinkSync } = await import('node:fs');
    unlinkSync(lock);
    await p;
    expect(await s.lastSeq('s')).toBe(2);
    expect(readdirSync(dir).filter((n) => n.includes('.append'))).toEqual([]);
    await s.close();
  });
});

describe('JSONL session store: a lease file left empty', () => {
  it('by a process that died between creating and writing it is taken over once stale, with the next token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-jstore-'));
    const s = createJsonlStore({ dir, fsync: false, staleLockMs: 5_000 });
    const empty = join(dir, 's.lease.1');
    writeFileSync(empty, '');
    expect(await s.acquire('s', 'w', 30_000)).toBeUndefined(); // fresh: maybe being written
    const old = (Date.now() - 60_000) / 1000;
    utimesSync(empty, old, old);
    const lease = await s.acquire('s', 'w', 30_000);
    expect(lease?.token).toBe(2);
    await s.append(lease!, 0, [ev(1)]);
    expect(await s.lastSeq('s')).toBe(1);
  });
  it('lease only (repairOnAcquire: false, as dsh run/resume hold it): the log is left as it is; holder, expire and releaseSync', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-jstore-'));
    const w = createJsonlStore({ dir, fsync: false });
    const l1 = (await w.acquire('s', 'writer', 30_000))!;
    await w.append(l1, 0, [ev(1)]);
    appendFileSync(w.fileOf('s'), '0badc0de {"seq":2,"ty');
    await w.release(l1);
    const s = createJsonlStore({ dir, fsync: false, repairOnAcquire: false });
    const l2 = (await s.acquire('s', 'a', 30_000))!;
    expect((await readJsonlLog(s.fileOf('s'))).torn).toMatchObject({ repaired: false });
    expect(s.holder('s')).toMatchObject({ owner: 'a', token: l2.token });
    expect(await s.acquire('s', 'b', 30_000)).toBeUndefined();
    // Only the current token is expired (an older one names a holder long gone).
    expect(s.expire('s', l2.token - 1)).toBe(false);
    expect(s.expire('s', l2.token)).toBe(true);
    expect(s.holder('s')).toBeUndefined();
    const l3 = (await s.acquire('s', 'b', 30_000))!;
    expect(l3.token).toBe(l2.token + 1);
    s.releaseSync(l2); // lost already: left alone
    expect(s.holder('s')).toMatchObject({ owner: 'b' });
    s.releaseSync(l3);
    expect(s.holder('s')).toBeUndefined();
    await s.close();
    await w.close();
  });
});
