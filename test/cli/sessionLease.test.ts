// One process writes a session at a time: `dsh run` and `dsh resume` hold the session's lease
// (src/adapters/store/sessionLease.ts) while they write its log. A second process on the same session is
// refused at once (one line, exit 1) and writes nothing; the lease is released on exit (Ctrl-C
// included), and one left by a process that was killed does not block the next. Real processes.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import { LogEventSchema, type LogEvent } from '../../src/protocol/index.js';
import { dsh, startDsh, waitFor } from './spawnDsh.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const HANG = 180_000;

function workspace(): { dir: string; script: string } {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-lease-cli-'));
  dirs.push(dir);
  const script = join(dir, 'script.json');
  // The turn's one call runs until it is cancelled (or the process is killed).
  writeFileSync(script, JSON.stringify([{ toolCalls: [{ toolName: 'bash', input: { command: 'echo $$ > started.txt && sleep 120' } }] }, { text: 'done' }]));
  return { dir, script };
}
const sessionIds = (dir: string) => readdirSync(join(dir, '.dsh', 'sessions')).filter((n) => n.endsWith('.jsonl')).map((n) => n.slice(0, -6));

/** Every event valid, seqs 1..n without a gap, every call paired with one result. */
function expectWhole(events: LogEvent[]) {
  events.forEach((e, i) => {
    expect(e.seq).toBe(i + 1);
    LogEventSchema.parse(e);
  });
  for (const c of events.filter((e) => e.type === 'tool/call')) {
    expect(events.filter((e) => e.type === 'tool/result' && e.sourceEventSeqs.includes(c.seq))).toHaveLength(1);
  }
}

describe('one process per session (the session lease)', () => {
  it('dsh resume while dsh run is live: refused at once, one line naming the session and the holder, exit 1; nothing written', async () => {
    const { dir, script } = workspace();
    const first = startDsh(dir, ['run', 'go', '--allow', 'bash', '--model', `scripted:${script}`]);
    await waitFor(() => existsSync(join(dir, 'started.txt')), 'the run to start its call');
    const [id] = sessionIds(dir);
    const file = join(dir, '.dsh', 'sessions', `${id}.jsonl`);
    const before = readFileSync(file);

    writeFileSync(join(dir, 'other.json'), JSON.stringify([{ text: 'second writer' }]));
    const second = await dsh(dir, ['resume', id!, 'also go', '--model', `scripted:${join(dir, 'other.json')}`]);
    expect(second.code, second.err).toBe(1);
    const lines = second.err.trim().split('\n');
    expect(lines, second.err).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^dsh resume: session ${id}: LEASE_HELD: in use by dsh run \\(pid ${first.child.pid} on \\S+\\), its lease renewed until \\S+; one process writes a session at a time`));
    expect(second.out).toBe('');
    // The live run's log is untouched by the refused process (its call is still running).
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readFileSync(file, 'utf8')).not.toMatch(/also go|second writer/);

    first.child.kill('SIGINT');
    const firstDone = await first.done;
    expect(firstDone.code, firstDone.err).toBe(130);

    // Released on Ctrl-C: the next process takes the session at once and goes on with it.
    writeFileSync(join(dir, 'next.json'), JSON.stringify([{ text: 'next turn done' }]));
    const next = await dsh(dir, ['resume', id!, 'next', '--model', `scripted:${join(dir, 'next.json')}`]);
    expect(next.code, next.err).toBe(0);
    const { events } = await readJsonlLog(file);
    expectWhole(events);
    expect(events.filter((e) => e.type === 'turn/start')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'turn/end').map((e) => (e as { outcome: string }).outcome)).toEqual(['cancelled', 'completed']);
    expect(JSON.stringify(events)).not.toMatch(/also go|second writer/);
  }, HANG);

  it('dsh repair of a session dsh run is writing: refused at once (LEASE_HELD), the file not cut', async () => {
    const { dir, script } = workspace();
    const first = startDsh(dir, ['run', 'go', '--allow', 'bash', '--model', `scripted:${script}`]);
    await waitFor(() => existsSync(join(dir, 'started.txt')), 'the run to start its call');
    const [id] = sessionIds(dir);
    const file = join(dir, '.dsh', 'sessions', `${id}.jsonl`);
    const before = readFileSync(file);
    const repair = await dsh(dir, ['repair', id!, '--yes']);
    expect(repair.code, repair.err).toBe(1);
    expect(repair.err.trim().split('\n'), repair.err).toHaveLength(1);
    expect(repair.err).toMatch(new RegExp(`session ${id}: LEASE_HELD: in use by dsh run \\(pid ${first.child.pid} `));
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readdirSync(join(dir, '.dsh', 'sessions')).some((n) => n.includes('.bak-'))).toBe(false);
    first.child.kill('SIGINT');
    expect((await first.done).code).toBe(130);
    // Once the run has ended, repair takes the session: an intact log has nothing to cut.
    const after = await dsh(dir, ['repair', id!, '--yes']);
    expect(after.code, after.err).toBe(0);
    expect(after.out).toMatch(/nothing to repair/);
  }, HANG);

  it('two dsh resume of one session at once: exactly one runs, the other is refused and writes nothing', async () => {
    const { dir, script } = workspace();
    const first = startDsh(dir, ['run', 'go', '--allow', 'bash', '--model', `scripted:${script}`]);
    await waitFor(() => existsSync(join(dir, 'started.txt')), 'the run to start its call');
    first.child.kill('SIGINT');
    expect((await first.done).code).toBe(130);
    const [id] = sessionIds(dir);
    rmSync(join(dir, 'started.txt'));
    // Each resume's turn runs a call that waits; the two start together.
    const a = startDsh(dir, ['resume', id!, 'a', '--allow', 'bash', '--model', `scripted:${script}`]);
    const b = startDsh(dir, ['resume', id!, 'b', '--allow', 'bash', '--model', `scripted:${script}`]);
    const refused = await Promise.race([a.done.then((r) => ({ r, other: b })), b.done.then((r) => ({ r, other: a }))]);
    expect(refused.r.code, refused.r.err).toBe(1);
    expect(refused.r.err).toMatch(/LEASE_HELD: in use by dsh resume \(pid \d+ on /);
    await waitFor(() => existsSync(join(dir, 'started.txt')), 'the other resume to start its call');
    refused.other.child.kill('SIGINT');
    expect((await refused.other.done).code).toBe(130);
    const { events } = await readJsonlLog(join(dir, '.dsh', 'sessions', `${id}.jsonl`));
    expectWhole(events);
    expect(events.filter((e) => e.type === 'turn/start')).toHaveLength(2);
  }, HANG);

  it('a lease left by a killed process (SIGKILL) does not block: the next resume takes it over at once and closes what it left open', async () => {
    const { dir, script } = workspace();
    const first = startDsh(dir, ['run', 'go', '--allow', 'bash', '--model', `scripted:${script}`]);
    await waitFor(() => existsSync(join(dir, 'started.txt')), 'the run to start its call');
    first.child.kill('SIGKILL');
    await first.done;
    // The command's process group outlives a dsh killed with SIGKILL: ended here, not left behind.
    try {
      process.kill(-Number(readFileSync(join(dir, 'started.txt'), 'utf8').trim()), 'SIGKILL');
    } catch {
      // already gone
    }
    const [id] = sessionIds(dir);
    writeFileSync(join(dir, 'next.json'), JSON.stringify([{ text: 'after the crash' }]));
    const next = await dsh(dir, ['resume', id!, 'next', '--model', `scripted:${join(dir, 'next.json')}`]);
    expect(next.code, next.err).toBe(0);
    expect(next.err).toMatch(/resumed an interrupted session: 1 call\(s\) marked INTERRUPTED/);
    const { events } = await readJsonlLog(join(dir, '.dsh', 'sessions', `${id}.jsonl`));
    expectWhole(events);
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', outcome: 'completed' });
  }, HANG);

  it("another host's live lease is refused until it expires; an expired one is taken over", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-lease-cli-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'one.json'), JSON.stringify([{ text: 'one' }]));
    expect((await dsh(dir, ['run', 'first', '--model', `scripted:${join(dir, 'one.json')}`])).code).toBe(0);
    const [id] = sessionIds(dir);
    const sessions = join(dir, '.dsh', 'sessions');
    const top = Math.max(...readdirSync(sessions).filter((n) => n.startsWith(`${id}.lease.`)).map((n) => Number(n.split('.').pop())));
    const lease = (expiresAt: number) => JSON.stringify({ owner: 'dsh run pid 4242 on elsewhere.example #abc', token: top + 1, expiresAt, ttlMs: 30_000 });
    writeFileSync(join(sessions, `${id}.lease.${top + 1}`), lease(Date.now() + 3_600_000));
    const refused = await dsh(dir, ['resume', id!, 'second', '--model', `scripted:${join(dir, 'one.json')}`]);
    expect(refused.code).toBe(1);
    expect(refused.err.trim()).toMatch(new RegExp(`^dsh resume: session ${id}: LEASE_HELD: in use by dsh run \\(pid 4242 on elsewhere\\.example\\)`));
    writeFileSync(join(sessions, `${id}.lease.${top + 1}`), lease(Date.now() - 1));
    const taken = await dsh(dir, ['resume', id!, 'second', '--model', `scripted:${join(dir, 'one.json')}`]);
    expect(taken.code, taken.err).toBe(0);
    const { events } = await readJsonlLog(join(sessions, `${id}.jsonl`));
    expectWhole(events);
    expect(events.filter((e) => e.type === 'turn/end')).toHaveLength(2);
  }, HANG);
});
