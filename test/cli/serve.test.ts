/**
 * `dsh serve` as a real process: the project's sessions over the wire protocol on loopback, with
 * the token it prints; a turn on the configured model runs dsh's own tools and policies (a `write`
 * asks, the page answers, the file is on disk); the log is the project's JSONL file; no token, a
 * wrong token or a wrong Host is refused.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectSession } from '../../src/client/index.js';
import { startDsh, waitFor } from './spawnDsh.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A raw GET with a Host header of our choosing (fetch will not send a forged one). */
const getWithHost = (url: string, host: string, token: string) =>
  new Promise<number>((resolve, reject) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, headers: { host, authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });

describe('dsh serve', () => {
  it("serves the project's sessions with its token: a page starts a turn, answers the write's question, and the file and the log are on disk", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-serve-'));
    dirs.push(dir);
    const script = join(dir, 'script.json');
    writeFileSync(script, JSON.stringify([{ text: 'Writing.', toolCalls: [{ toolName: 'write', input: { path: 'notes.txt', content: 'hello\n' } }] }, { text: 'Written.' }]));
    const served = startDsh(dir, ['serve', '--model', `scripted:${script}`]);
    try {
      const api = await waitFor(() => /on (http:\/\/127\.0\.0\.1:\d+\/api)/.exec(served.out())?.[1], 'the URL');
      const token = await waitFor(() => /token (\S+)/.exec(served.out())?.[1], 'the token');
      expect((await fetch(`${api}/sessions`)).status).toBe(401);
      expect((await fetch(`${api}/sessions`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
      expect(await getWithHost(`${api}/sessions`, 'evil.example', token)).toBe(403);
      const listed = await fetch(`${api}/sessions?token=${token}`);
      expect(await listed.json()).toEqual({ sessions: [] });

      const created = await fetch(`${api}/sessions`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'one' }, body: '{}' });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      const page = connectSession(`${api}/sessions/${id}`, { headers: { authorization: `Bearer ${token}` } });
      try {
        const { turnId } = await page.startTurn('write the notes');
        const question = await waitFor(() => page.getSnapshot().approvals.find((a) => a.answerable), 'the question');
        expect(question).toMatchObject({ toolName: 'write', reason: expect.any(String) });
        await page.answer(question.id, 'allow-once');
        await waitFor(() => page.getSnapshot().turns.find((t) => t.turnId === turnId)?.state === 'ended', 'the turn ends');
        expect(page.getSnapshot().turns[0]).toMatchObject({ outcome: 'completed', answer: 'Written.' });
      } finally {
        page.close();
      }
      expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('hello\n');
      const log = join(dir, '.dsh', 'sessions', `${id}.jsonl`);
      expect(existsSync(log)).toBe(true);
      expect(readFileSync(log, 'utf8')).toContain('"tool/approval-answer"');
    } finally {
      served.child.kill('SIGINT');
    }
    const end = await served.done;
    expect(end.code).toBe(0);
  }, 120_000);
});
