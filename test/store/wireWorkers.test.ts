/**
 * Sessions run by `dsh worker`s on Postgres, served over the wire (issue 34 item 4): the web process
 * (here, the test's `createSessionHandler` on `postgresSessionDirectory`) runs no agent. Two real
 * `dsh worker --ask-pages` processes on a real database; a page (`connectSession`) starts a turn,
 * follows the worker's session live in seq order, and approves the call the worker waits on; the
 * worker runs it once. Two pages answering at once: one answer wins, the body runs as it says.
 * Bounds only catch hangs.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresSessionStore } from '../../src/adapters/store/pgStore.js';
import { connectSession, type RemoteSession } from '../../src/client/index.js';
import { createSessionHandler, postgresSessionDirectory, toNodeListener } from '../../src/server/index.js';
import { startDsh } from '../cli/spawnDsh.js';
import { pgUrl } from './backends.js';
import { freshDatabase } from './pgTestDb.js';

const HANG = 300_000;
const test = pgUrl() ? it : it.skip;
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Workers' output, shown when a wait is never met. */
const outputs: Array<() => string> = [];
async function until(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never reached: ${what}\n${outputs.map((o) => o()).join('\n---\n').slice(-3000)}`);
}

/** Two `dsh worker --ask-pages` processes and a web process on a fresh database. */
async function setup(script: unknown[]) {
  const url = await freshDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'dsh-wire-workers-'));
  const file = join(dir, 'script.json');
  writeFileSync(file, JSON.stringify(script));
  const workers = [0, 1].map(() => {
    const w = startDsh(dir, ['worker', '--database', url, '--workspaces', join(dir, 'ws'), '--model', `scripted:${file}`, '--ask-pages', '--concurrency', '2']);
    let err = '';
    w.child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    outputs.push(() => err);
    cleanups.push(() => {
      if (w.child.exitCode === null) w.child.kill('SIGKILL');
    });
    return w;
  });
  const store: PostgresSessionStore = await openPostgresStore({ connectionString: url, maxConnections: 4 });
  const sessions = postgresSessionDirectory({ store, pollMs: 50 });
  const handler = createSessionHandler({ sessions, authorize: () => true });
  const http = createServer(toNodeListener(handler));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    handler.close();
    http.closeAllConnections();
    await new Promise((r) => http.close(r));
    await sessions.close();
    await store.close();
  });
  const api = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api`;
  const created = await fetch(`${api}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'new' }, body: '{}' });
  const { id } = (await created.json()) as { id: string };
  const page = (): RemoteSession => {
    const r = connectSession(`${api}/sessions/${id}`, { backoff: { initialMs: 20, maxMs: 200 } });
    cleanups.push(() => r.close());
    return r;
  };
  return { dir, id, store, workers, page, workspace: join(dir, 'ws', id) };
}

const WRITE = [{ text: 'Writing.', toolCalls: [{ toolName: 'write', input: { path: 'notes.txt', content: 'from a worker\n' } }] }, { text: 'Written.' }];

describe('sessions run by dsh workers, served over the wire', () => {
  test(
    'a page follows a worker\'s session live in seq order and approves the call; the worker runs it once',
    async () => {
      const s = await setup(WRITE);
      const page = s.page();
      const seqs: number[] = [];
      page.subscribe(() => {
        const last = page.getSnapshot().lastSeq;
        if (last !== seqs.at(-1)) seqs.push(last);
      });
      const { turnId } = await page.startTurn('write the notes');
      expect(turnId).toBe('turn-1');
      await until(() => page.getSnapshot().approvals.some((a) => a.answerable), 'the worker asks');
      const question = page.getSnapshot().approvals[0]!;
      expect(question).toMatchObject({ toolName: 'write', turnId: 'turn-1' });
      await page.answer(question.id, 'allow-once');
      await until(() => page.getSnapshot().turns.find((t) => t.turnId === turnId)?.state === 'ended', 'the turn ends');
      expect(page.getSnapshot().turns[0]).toMatchObject({ outcome: 'completed', answer: 'Written.' });
      expect(readFileSync(join(s.workspace, 'notes.txt'), 'utf8')).toBe('from a worker\n');
      const events = await s.store.read(s.id);
      expect(page.getSnapshot().lastSeq).toBe(events.at(-1)!.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(events.filter((e) => e.type === 'tool/approval-answer').map((e) => e.type === 'tool/approval-answer' && e.answer)).toEqual(['allowed-once']);
      expect(events.filter((e) => e.type === 'tool/result')).toHaveLength(1);
    },
    HANG,
  );

  test(
    'two pages answer the worker\'s question at once: one wins and is logged, the other is told the winner; a deny\'s reason is logged with it',
    async () => {
      const s = await setup([{ text: 'Writing.', toolCalls: [{ toolName: 'write', input: { path: 'raced.txt', content: 'x\n' } }] }, { text: 'Done.' }]);
      const [a, b] = [s.page(), s.page()];
      const { turnId } = await a.startTurn('write raced.txt');
      await until(() => a.getSnapshot().approvals.some((q) => q.answerable) && b.getSnapshot().approvals.some((q) => q.answerable), 'both pages see the question');
      const id = a.getSnapshot().approvals[0]!.id;
      const results = await Promise.allSettled([a.answer(id, 'deny', 'not on the worker'), b.answer(id, 'allow-once')]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
      expect(lost.reason).toMatchObject({ code: 'ALREADY_ANSWERED' });
      await until(() => a.getSnapshot().turns.find((t) => t.turnId === turnId)?.state === 'ended', 'the turn ends');
      const events = await s.store.read(s.id);
      const answers = events.filter((e) => e.type === 'tool/approval-answer');
      expect(answers).toHaveLength(1);
      const denied = answers[0]!.type === 'tool/approval-answer' && answers[0]!.answer === 'denied';
      expect(existsSync(join(s.workspace, 'raced.txt'))).toBe(!denied);
      if (denied) expect(answers[0]).toMatchObject({ reason: 'not on the worker' });
    },
    HANG,
  );
});
