/**
 * `connectSession` (dsh/client) against a real `node:http` server running `createSessionHandler`:
 * the remote view shows what a local view of the same runtime shows; it survives a cut connection
 * and a server restart (JSONL logs) with every event applied once; its commands take effect once
 * even when the network loses their answers; an approval answered from two clients at once runs
 * the body once and tells the loser who won.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { connectSession, SessionCommandError, type RemoteSession } from '../../src/client/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { createSessionHandler, jsonlSessionDirectory, toNodeListener } from '../../src/server/index.js';
import { createApprovalInbox } from '../../src/view/approvalInbox.js';
import { createSessionView } from '../../src/view/sessionView.js';
import { TOKEN, bearer, newSession, startWireServer, until, type WireServer } from '../server/wireServer.js';

let server: WireServer | undefined;
const remotes: RemoteSession[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const r of remotes.splice(0)) r.close();
  await server?.close();
  server = undefined;
  for (const c of cleanups.splice(0)) await c();
});

const connect = (url: string, options: Parameters<typeof connectSession>[1] = {}) => {
  const r = connectSession(url, { headers: { authorization: `Bearer ${TOKEN}` }, backoff: { initialMs: 5, maxMs: 50 }, ...options });
  remotes.push(r);
  return r;
};
const turnEnded = (r: RemoteSession, turnId: string) => r.getSnapshot().turns.find((t) => t.turnId === turnId)?.state === 'ended';

/** A server on the JSONL logs in `dir` (each session's runtime made by `host`); `start(port)` again on the same port is a restart. */
const jsonlServer = (dir: string, host: Parameters<typeof jsonlSessionDirectory>[0]['host']) => async (port = 0) => {
  const directory = jsonlSessionDirectory({ dir, host });
  const handler = createSessionHandler({ sessions: directory, authorize: bearer });
  const http = createServer(toNodeListener(handler));
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  return {
    port: (http.address() as AddressInfo).port,
    stop: async () => {
      handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await directory.close();
    },
  };
};

describe('a remote session view', () => {
  it('shows what a local view of the same runtime shows: turns, steps, text, calls in the model order, results', async () => {
    server = await startWireServer(() => [
      { text: 'Waiting on two.', toolCalls: [{ toolName: 'wait', input: { name: 'a' } }, { toolName: 'wait', input: { name: 'b' } }] },
      { text: 'Both done.' },
    ]);
    const s = await newSession(server);
    const remote = connect(s.url);
    const { turnId } = await remote.startTurn('wait for both');
    expect(turnId).toBe('turn-1');
    await until(() => remote.getSnapshot().turns[0]?.calls.length === 2, 'both calls show');
    server.session(s.id).open('b');
    server.session(s.id).open('a');
    await until(() => turnEnded(remote, turnId), 'the turn ends');
    const local = createSessionView(server.session(s.id).rt);
    await until(() => remote.getSnapshot().lastSeq === server!.session(s.id).rt.log.lastSeq, 'every event');
    expect(JSON.parse(JSON.stringify(remote.getSnapshot()))).toEqual(JSON.parse(JSON.stringify(local.getSnapshot())));
    expect(remote.getSnapshot().turns[0]).toMatchObject({ state: 'ended', outcome: 'completed', answer: 'Both done.' });
    expect(remote.getSnapshot().turns[0]!.calls.map((c) => c.result?.content)).toEqual(['a done', 'b done']);
    expect(remote.status().state).toBe('open');
    // Code written against createSessionView takes the remote session unchanged: it already is a view.
    const viewed = createSessionView(remote);
    expect(viewed).toBe(remote);
    expect(viewed.getSnapshot()).toBe(remote.getSnapshot());
  });

  it('a connection the server cuts mid-turn resumes after its last seq: every event applied once, the turn completes', async () => {
    server = await startWireServer(() => [
      { text: 'One.', toolCalls: [{ toolName: 'wait', input: { name: 'a' } }] },
      { text: 'Two.', toolCalls: [{ toolName: 'wait', input: { name: 'b' } }] },
      { text: 'Done.' },
    ]);
    const s = await newSession(server);
    const remote = connect(s.url);
    const applied: number[] = [];
    let lastSeen = 0;
    remote.subscribe(() => {
      const seq = remote.getSnapshot().lastSeq;
      if (seq !== lastSeen) applied.push(seq);
      lastSeen = seq;
    });
    const { turnId } = await remote.startTurn('go');
    await until(() => remote.getSnapshot().turns[0]?.calls.length === 1, 'the first call');
    server.server.closeAllConnections();
    server.session(s.id).open('a');
    await until(() => remote.getSnapshot().turns[0]?.calls.length === 2, 'the second call, after the cut');
    server.server.closeAllConnections();
    server.session(s.id).open('b');
    await until(() => turnEnded(remote, turnId), 'the turn ends');
    expect(remote.status().retries).toBe(0);
    const seqs = server.session(s.id).rt.log.events().map((e) => e.seq);
    expect(remote.getSnapshot().lastSeq).toBe(seqs.at(-1));
    // The view's seq only ever grows.
    expect(applied).toEqual([...applied].sort((a, b) => a - b));
    expect(remote.getSnapshot().turns[0]!.calls.map((c) => c.stage)).toEqual(['done', 'done']);
  });

  it('a command whose answer the network lost is retried with the same key: one turn starts', async () => {
    server = await startWireServer(() => [{ text: 'one' }, { text: 'two' }]);
    const s = await newSession(server);
    let lost = 0;
    const flaky: typeof fetch = async (input, init) => {
      const r = await fetch(input, init);
      if (init?.method === 'POST' && lost++ === 0) {
        await r.text();
        throw new TypeError('fetch failed (the answer was lost)');
      }
      return r;
    };
    const remote = connect(s.url, { fetch: flaky });
    const { turnId } = await remote.startTurn('go');
    await until(() => turnEnded(remote, turnId), 'the turn ends');
    expect(lost).toBe(2);
    expect(server.session(s.id).rt.log.events().filter((e) => e.type === 'turn/start')).toHaveLength(1);
  });

  it('two clients answer one approval at once: one wins, the other is told the winning answer; the body runs once', async () => {
    server = await startWireServer(() => [{ text: 'Writing.', toolCalls: [{ toolName: 'write', input: { path: 'x.txt' } }] }, { text: 'Written.' }]);
    const s = await newSession(server);
    const [tabA, tabB] = [connect(s.url), connect(s.url)];
    const { turnId } = await tabA.startTurn('write x');
    await until(() => tabA.getSnapshot().approvals[0]?.answerable === true && tabB.getSnapshot().approvals[0]?.answerable === true, 'both tabs can answer');
    const id = tabA.getSnapshot().approvals[0]!.id;
    const results = await Promise.allSettled([tabA.answer(id, 'allow-once'), tabB.answer(id, 'deny', 'not now')]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    const error = lost[0]!.reason as SessionCommandError;
    expect(error).toBeInstanceOf(SessionCommandError);
    expect(error.code).toBe('ALREADY_ANSWERED');
    expect(['allow-once', 'deny']).toContain(error.winner?.answer);
    await until(() => turnEnded(tabA, turnId) && turnEnded(tabB, turnId), 'both tabs see the end');
    const answers = server.session(s.id).rt.log.events().filter((e) => e.type === 'tool/approval-answer');
    expect(answers).toHaveLength(1);
    expect(server.session(s.id).writes).toEqual(error.winner?.answer === 'allow-once' ? ['x.txt'] : []);
    expect(tabA.getSnapshot().approvals).toEqual([]);
  });

  it('approve(), deny() and suspend() return false for a question this view cannot answer; a refused stream closes with why', async () => {
    server = await startWireServer(() => [{ text: 'hi' }]);
    const s = await newSession(server);
    const remote = connect(s.url);
    expect(remote.approve('turn-1/0/nope')).toBe(false);
    expect(remote.deny('turn-1/0/nope', 'no')).toBe(false);
    expect(remote.suspend('turn-1/0/nope')).toBe(false);
    const stranger = connect(s.url, { headers: { authorization: 'Bearer wrong' } });
    await until(() => stranger.status().state === 'closed', 'the refused stream closes');
    expect(stranger.status().error).toBe('credentials required');
    await expect(stranger.startTurn('go')).rejects.toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });
});

describe('a server restarted on the same JSONL logs', () => {
  it('the page reconnects and goes on from its seq: nothing twice, nothing skipped, a new turn shows', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dsh-wire-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const echo = defineTool({ name: 'echo', input: z.object({ text: z.string() }), isConcurrencySafe: () => true, execute: async ({ text }) => text });
    const start = jsonlServer(dir, (opened) => {
      const approvals = createApprovalInbox();
      const model = scriptedModel([{ text: 'Echoing.', toolCalls: [{ toolName: 'echo', input: { text: 'hi' } }] }, { text: 'Echoed.' }]);
      return { runtime: createRuntime({ log: opened.log, tools: [echo], approval: approvals }), approvals, turnOptions: () => ({ model }) };
    });
    const first = await start();
    const base = `http://127.0.0.1:${first.port}/api`;
    const created = await fetch(`${base}/sessions`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'idempotency-key': 'new' }, body: '{}' });
    const { id } = (await created.json()) as { id: string };
    const remote = connect(`${base}/sessions/${id}`);
    const t1 = await remote.startTurn('one');
    await until(() => turnEnded(remote, t1.turnId), 'turn 1 ends');
    const before = remote.getSnapshot().lastSeq;
    await first.stop();
    await until(() => remote.status().state === 'retrying', 'the page notices');
    const second = await start(first.port);
    cleanups.push(second.stop);
    await until(() => remote.status().state === 'open', 'the page is back');
    expect(remote.getSnapshot().lastSeq).toBe(before);
    const t2 = await remote.startTurn('two');
    await until(() => turnEnded(remote, t2.turnId), 'turn 2 ends');
    expect(remote.getSnapshot().turns.map((t) => [t.input, t.state, t.outcome])).toEqual([
      ['one', 'ended', 'completed'],
      ['two', 'ended', 'completed'],
    ]);
    expect(remote.getSnapshot().turns.flatMap((t) => t.calls.map((c) => c.result?.content))).toEqual(['hi', 'hi']);
  });

  it('a server stopped while a question waits suspends its turn in the log; restarted, it asks again, and the page answers it: the body runs once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dsh-wire-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const writes: string[] = [];
    // The provider outlives the server: its script goes on where it stood.
    const model = scriptedModel([{ text: 'Writing.', toolCalls: [{ toolName: 'write', input: { path: 'x.txt' } }] }, { text: 'Written.' }]);
    const write = defineTool({ name: 'write', input: z.object({ path: z.string() }), execute: async ({ path }) => (writes.push(path), `wrote ${path}`) });
    const start = jsonlServer(dir, (opened) => {
      const approvals = createApprovalInbox();
      const runtime = createRuntime({ log: opened.log, tools: [write], approval: approvals });
      runtime.hooks.on('tools/pre-execute', 'ask', (call, next) => (call.toolName === 'write' ? { kind: 'ask', reason: 'changes a file' } : next()));
      return { runtime, approvals, turnOptions: () => ({ model }) };
    });
    const first = await start();
    const base = `http://127.0.0.1:${first.port}/api`;
    const created = await fetch(`${base}/sessions`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'idempotency-key': 'new' }, body: '{}' });
    const { id } = (await created.json()) as { id: string };
    const remote = connect(`${base}/sessions/${id}`);
    const { turnId } = await remote.startTurn('write x');
    await until(() => remote.getSnapshot().approvals[0]?.answerable === true, 'the question');
    await first.stop();
    await until(() => remote.getSnapshot().turns[0]?.state === 'suspended' || remote.status().state === 'retrying', 'the page notices');
    const second = await start(first.port);
    cleanups.push(second.stop);
    await until(() => remote.status().state === 'open' && remote.getSnapshot().approvals.some((a) => a.answerable), 'asked again, answerable');
    expect(remote.approve(remote.getSnapshot().approvals.find((a) => a.answerable)!.id)).toBe(true);
    await until(() => turnEnded(remote, turnId), 'the turn ends');
    expect(remote.getSnapshot().turns.map((t) => [t.turnId, t.state, t.outcome])).toEqual([[turnId, 'ended', 'completed']]);
    expect(writes).toEqual(['x.txt']);
  });
});

