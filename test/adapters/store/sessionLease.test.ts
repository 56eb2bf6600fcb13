/**
 * One writer per JSONL session in the library (issue 24 item 2, issue 25 item 9): the session's
 * lease (src/adapters/store/sessionLease.ts), taken by `openJsonlSessionLog` by default. Real
 * processes, real signals; bounds only catch hangs.
 *
 * - two processes `resumeTurn` one suspended session at one instant: one wins, the other fails
 *   `LEASE_HELD` having written nothing; each approved body runs once; the log replays;
 * - the same file through a symlink and through a hard link is the same session: refused
 *   `LEASE_HELD` while it is held, its bytes untouched, and the log replays;
 * - stray files beside the log (`<id>.lease.1e3`, `.0x10`, `.07`) are not leases;
 * - a holder killed but not yet reaped (a zombie, state Z) holds nothing;
 * - lease files do not pile up: one per session, however many runs.
 */
import { spawn } from 'node:child_process';
import { linkSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openJsonlSessionLog, readJsonlLog } from '../../../src/adapters/log/jsonlLog.js';
import { createJsonlStore } from '../../../src/adapters/store/jsonlStore.js';
import { holdSessionLease, processEnded } from '../../../src/adapters/store/sessionLease.js';
import { LogEventSchema, type LogEvent } from '../../../src/protocol/index.js';
import { StoreConflictError } from '../../../src/runtime/store/sessionStore.js';
import { testEnv, tsxLoader, waitFor } from '../../cli/spawnDsh.js';

const HANG = 120_000;
const sessionProcess = join(import.meta.dirname, '..', '..', 'runtime', 'resume', 'sessionProcess.ts');
const holder = join(import.meta.dirname, 'leaseHolder.ts');
const dirs: string[] = [];
const started: Array<{ kill(signal: NodeJS.Signals): boolean; exitCode: number | null; signalCode: NodeJS.Signals | null }> = [];
afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-lease-'));
  dirs.push(dir);
  return dir;
}

/** A child process (node with tsx, or any command): its stdout lines as JSON, its exit. */
function start(argv: string[], env: Record<string, string> = {}) {
  const child = spawn(argv[0]!, argv.slice(1), { env: testEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, out, err })),
  );
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.trim().startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, done, lines, err: () => err };
}
const node = (script: string, ...args: string[]) => start([process.execPath, '--import', tsxLoader, script, ...args]);
/** As `node`, but the process opens the log only once `go` exists (sessionProcess.ts's DSH_TEST_GO_FILE). */
const nodeAt = (go: string, script: string, ...args: string[]) => start([process.execPath, '--import', tsxLoader, script, ...args], { DSH_TEST_GO_FILE: go });

/** Every event valid, seq 1..n, every call answered once, every turn and step closed. */
function expectReplays(all: readonly LogEvent[]) {
  all.forEach((e, i) => {
    expect(e.seq).toBe(i + 1);
    LogEventSchema.parse(e);
  });
  for (const c of all) {
    if (c.type !== 'tool/call') continue;
    expect(all.filter((e) => e.type === 'tool/result' && e.sourceEventSeqs.includes(c.seq)), `results of ${c.callId}`).toHaveLength(1);
  }
  const count = (t: string) => all.filter((e) => e.type === t).length;
  expect(count('turn/start')).toBe(count('turn/end'));
  expect(count('step/start')).toBe(count('step/end'));
}

/** A session suspended on its approvals (sessionProcess.ts: `read a` ran, `run make` waits). */
async function suspendedSession() {
  const dir = tempDir();
  const file = join(dir, 'session.jsonl');
  const a = await node(sessionProcess, file, 'suspend').done;
  expect(a.code, a.err).toBe(0);
  const ran = () => readFileSync(join(dir, 'ran.txt'), 'utf8').trim().split('\n');
  expect(ran()).toEqual(['read a']);
  return { dir, file, ran };
}

const leaseFiles = (dir: string) => readdirSync(dir).filter((n) => n.includes('.lease.'));

describe('one writer per JSONL session in the library (the session lease)', () => {
  it('two processes resumeTurn one suspended session at one instant: one wins, the other is refused LEASE_HELD; each body runs once; the log replays', async () => {
    const s = await suspendedSession();
    const before = readFileSync(s.file);
    // Both processes start, load, and wait at a barrier; then both open the log at one instant.
    const go = join(s.dir, 'go');
    const [a, b] = [nodeAt(go, sessionProcess, s.file, 'resume', 'allowed-always'), nodeAt(go, sessionProcess, s.file, 'resume', 'allowed-always')];
    await waitFor(() => [a, b].every((p) => p.lines().some((l) => 'waiting' in l)), 'both processes at the barrier', 90_000);
    writeFileSync(go, '');
    const [ra, rb] = await Promise.all([a.done, b.done]);
    const results = [ra, rb];
    const won = results.filter((r) => r.code === 0);
    const lost = results.filter((r) => r.code !== 0);
    expect(won, `${ra.err}\n${rb.err}`).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.err).toMatch(/LEASE_HELD: in use by dsh library \(pid \d+ on \S+\)/);
    // The loser printed nothing after the barrier: it failed at the open, before reading the log.
    expect(lost[0]!.out.trim().split('\n')).toHaveLength(1);
    expect(won[0]!.out).toMatch(/"outcome":"completed"/);
    // What the first process ran stays once; the approved calls ran once each (one resume's worth).
    expect(s.ran()).toEqual(['read a', 'run make', 'read b', 'run test', 'run make']);
    const all = (await readJsonlLog(s.file)).events;
    expectReplays(all);
    expect(readFileSync(s.file).subarray(0, before.length).equals(before)).toBe(true);
    expect(all.filter((e) => e.type === 'turn/start')).toHaveLength(1);
    expect(all.at(-1)).toMatchObject({ type: 'turn/end', outcome: 'completed' });
  }, HANG);

  it('a symlink and a hard link to a held log are the same session: refused LEASE_HELD, the log untouched; once free, through the hard link, the session goes on and replays', async () => {
    const s = await suspendedSession();
    const elsewhere = tempDir();
    const viaSymlink = join(elsewhere, 'alias.jsonl');
    const viaHardLink = join(elsewhere, 'other-name.jsonl');
    symlinkSync(s.file, viaSymlink);
    linkSync(s.file, viaHardLink);
    // The holder resumes through the real path and waits on the approval it asks.
    const held = node(sessionProcess, s.file, 'hang');
    await waitFor(() => held.lines().some((l) => 'asking' in l), 'the holder to ask its approval', 60_000);
    const bytes = readFileSync(s.file);
    for (const alias of [viaSymlink, viaHardLink]) {
      const r = await node(sessionProcess, alias, 'resume', 'allowed-always').done;
      expect(r.code, `${alias}: ${r.err}`).not.toBe(0);
      expect(r.err).toMatch(new RegExp(`LEASE_HELD: in use by dsh library \\(pid ${held.child.pid} on `));
      expect(r.out).toBe('');
      expect(readFileSync(s.file).equals(bytes)).toBe(true);
      // In this process too (the library's lease, not the CLI's).
      await expect(openJsonlSessionLog(alias)).rejects.toMatchObject({ code: 'LEASE_HELD' });
    }
    held.child.kill('SIGKILL');
    await held.done;
    // The holder is gone (its pid with it): the next writer takes the session at once, by any name.
    const next = await node(sessionProcess, viaHardLink, 'resume', 'allowed-always').done;
    expect(next.code, next.err).toBe(0);
    expect(next.out).toMatch(/"outcome":"completed"/);
    const all = (await readJsonlLog(s.file)).events;
    expectReplays(all);
    expect(all.at(-1)).toMatchObject({ type: 'turn/end', outcome: 'completed' });
  }, HANG);

  it('in one process: a second open of a held log (by another name) fails LEASE_HELD before reading; closing the first frees it', async () => {
    const dir = tempDir();
    const file = join(dir, 's.jsonl');
    const first = await openJsonlSessionLog(file, { fsync: false });
    expect(first.lease?.file).toBe(file);
    symlinkSync(file, join(dir, 'link.jsonl'));
    const refused = await openJsonlSessionLog(join(dir, 'link.jsonl'), { fsync: false }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreConflictError);
    expect((refused as StoreConflictError).code).toBe('LEASE_HELD');
    await first.sink.close();
    const again = await openJsonlSessionLog(join(dir, 'link.jsonl'), { fsync: false });
    await again.sink.close();
  });

  it('the opened handle is what a user closes: close() and `await using` write what is buffered and free the session; a lease passed in stays held', async () => {
    const dir = tempDir();
    const file = join(dir, 'handle.jsonl');
    {
      await using opened = await openJsonlSessionLog(file, { fsync: false });
      opened.log.append({ type: 'turn/start', turnId: 't1', input: 'hi' } as Parameters<typeof opened.log.append>[0]);
      await expect(openJsonlSessionLog(file, { fsync: false })).rejects.toMatchObject({ code: 'LEASE_HELD' });
    }
    expect((await readJsonlLog(file)).events.map((e) => e.type)).toEqual(['turn/start']);
    const second = await openJsonlSessionLog(file, { fsync: false });
    await second.close();
    await second.close(); // twice is fine
    const held = await holdSessionLease(file);
    const third = await openJsonlSessionLog(file, { fsync: false, lease: held });
    await third.close();
    await expect(openJsonlSessionLog(file, { fsync: false })).rejects.toMatchObject({ code: 'LEASE_HELD' });
    held.release();
    await (await openJsonlSessionLog(file, { fsync: false })).close();
  });

  it('stray files named like leases (<id>.lease.1e3, .0x10, .07, .-1, .1.5) are not leases: the session opens, and the next token is 1', async () => {
    const dir = tempDir();
    const file = join(dir, 'stray.jsonl');
    const live = JSON.stringify({ owner: 'dsh run pid 1 on elsewhere.example #x', token: 1000, expiresAt: Date.now() + 3_600_000, ttlMs: 30_000 });
    for (const suffix of ['1e3', '0x10', '07', '-1', '1.5', ' 3', '3 ']) writeFileSync(join(dir, `stray.lease.${suffix}`), live);
    const store = createJsonlStore({ dir, fsync: false });
    expect(store.holder('stray')).toBeUndefined();
    const lease = await store.acquire('stray', 'me', 30_000);
    expect(lease?.token).toBe(1);
    await store.release(lease!);
    const opened = await openJsonlSessionLog(file, { fsync: false });
    expect(opened.lease!.lease.token).toBe(2);
    await opened.sink.close();
  });

  it('a holder killed but not yet reaped (a zombie, state Z) holds nothing: the lease is taken at once', async () => {
    const dir = tempDir();
    const file = join(dir, 'z.jsonl');
    // sh starts the holder in the background, then becomes `sleep`, which never reaps it.
    const parent = start(['sh', '-c', `"${process.execPath}" --import "${tsxLoader}" "${holder}" "${file}" die & exec sleep 120`]);
    const pid = (await waitFor(() => parent.lines().find((l) => typeof l.held === 'number'), 'the holder to take the lease')).held as number;
    await waitFor(() => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
    }, 'the holder to be a zombie');
    // Still there for kill(pid, 0): the old check counted it alive.
    expect(() => process.kill(pid, 0)).not.toThrow();
    expect(processEnded(pid)).toBe(true);
    const held = await holdSessionLease(file, { command: 'test' });
    held.release();
    parent.child.kill('SIGKILL');
    await parent.done;
  }, HANG);

  it('lease files do not pile up: after 20 runs one lease file is left beside the log', async () => {
    const dir = tempDir();
    const file = join(dir, 'many.jsonl');
    for (let i = 0; i < 20; i++) {
      const { sink } = await openJsonlSessionLog(file, { fsync: false });
      await sink.close();
    }
    expect(leaseFiles(dir)).toEqual(['many.lease.20']);
  });
});
