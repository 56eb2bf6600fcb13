/**
 * The session wire protocol (SPEC §11, docs/protocol.md) served by `createSessionHandler` through a
 * real `node:http` server, read with Node's fetch as a page would: authorisation on every request,
 * the log as the stream (each event once, in `seq` order, resumable after any `seq`), commands
 * taken once per idempotency key, an approval answered once across clients, bounded bodies, CSRF,
 * and a client that never reads dropped instead of buffered.
 */
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sseFrames } from '../../src/client/sseFrames.js';
import type { LogEvent } from '../../src/protocol/index.js';
import type { LiveFrame } from '../../src/protocol/wire.js';
import { TOKEN, newSession, post, startWireServer, until, type WireServer } from './wireServer.js';

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const auth = { authorization: `Bearer ${TOKEN}` };

/** Reads a session's stream until `stop` says so; returns its log events and live frames. */
async function readStream(url: string, stop: (events: LogEvent[], live: LiveFrame[]) => boolean, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const r = await fetch(`${url}/events`, { headers: { ...auth, ...headers }, signal: abort.signal });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events: LogEvent[] = [];
  const ids: string[] = [];
  const live: LiveFrame[] = [];
  for await (const f of sseFrames(r.body!)) {
    if (f.event === 'log') {
      const e = JSON.parse(f.data) as LogEvent;
      events.push(e);
      ids.push(f.id ?? '');
    } else if (f.event === 'live') {
      expect(f.id).toBeUndefined();
      live.push(JSON.parse(f.data) as LiveFrame);
    }
    if (stop(events, live)) break;
  }
  abort.abort();
  expect(ids).toEqual(events.map((e) => String(e.seq)));
  return { events, live };
}

const ended = (events: LogEvent[]) => events.some((e) => e.type === 'turn/end');

describe('authorisation (SPEC §11.3)', () => {
  it('no credentials: 401 with a Bearer challenge; refused by `authorize`: 403 naming the action; `authorize` sees the session and action', async () => {
    const asked: string[] = [];
    server = await startWireServer(() => [{ text: 'hi' }], {
      authorize: (req, id, action) => {
        asked.push(`${id ?? '-'} ${action}`);
        if (req.headers.get('authorization') !== `Bearer ${TOKEN}`) return 'unauthenticated';
        return id !== 'secret';
      },
      ids: () => 'secret',
    });
    const none = await fetch(`${server.base}/sessions`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(await none.json()).toEqual({ error: { code: 'UNAUTHORIZED', message: 'credentials required' } });
    const created = await post(`${server.base}/sessions`, {});
    expect(created.status).toBe(201);
    const events = await fetch(`${server.base}/sessions/secret/events`, { headers: auth });
    expect(events.status).toBe(403);
    expect(((await events.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
    const turn = await post(`${server.base}/sessions/secret/turns`, { input: 'go' });
    expect(turn.status).toBe(403);
    expect(asked).toEqual(['- list', '- create', 'secret read', 'secret start']);
    expect(server.session('secret').rt.log.events()).toEqual([]);
  });

  it('a handler without `authorize` cannot be made', async () => {
    const { createSessionHandler } = await import('../../src/server/index.js');
    expect(() => createSessionHandler({ sessions: { list: async () => [], open: async () => undefined } } as never)).toThrow(/authorize.*required/);
  });
});

describe('the log is the stream (SPEC §11.1)', () => {
  it('a turn started by POST streams every event once, in seq order, each with its seq as the SSE id; a hello comes first', async () => {
    server = await startWireServer(() => [{ text: 'Waiting.', toolCalls: [{ toolName: 'wait', input: { name: 'a' } }] }, { text: 'Done.' }]);
    const s = await newSession(server);
    const started = await post(`${s.url}/turns`, { input: 'go' });
    expect(started.status).toBe(200);
    expect(await started.json()).toEqual({ ok: true, turnId: 'turn-1' });
    const reading = readStream(s.url, ended);
    await until(() => server!.session(s.id).rt.log.events().some((e) => e.type === 'tool/call'), 'the call');
    server.session(s.id).open('a');
    const { events, live } = await reading;
    expect(events.map((e) => e.seq)).toEqual(server.session(s.id).rt.log.events().map((e) => e.seq));
    expect(events.map((e) => e.type)).toContain('tool/result');
    expect(live[0]).toEqual({ type: 'hello', protocol: 1, sessionId: s.id, lastSeq: expect.any(Number) });
  });

  it('resuming with Last-Event-ID (or ?after=) gives exactly the events after it; a malformed one is a 400', async () => {
    server = await startWireServer(() => [{ text: 'one' }, { text: 'two' }]);
    const s = await newSession(server);
    await post(`${s.url}/turns`, { input: 'first' });
    await until(() => ended(server!.session(s.id).rt.log.events() as LogEvent[]), 'turn 1');
    const all = server.session(s.id).rt.log.events().map((e) => e.seq);
    const cut = all[2]!;
    const fromHeader = await readStream(s.url, (ev, live) => live.some((f) => f.type === 'answerable') && ev.length >= all.length - cut, { 'last-event-id': String(cut) });
    expect(fromHeader.events.map((e) => e.seq)).toEqual(all.filter((q) => q > cut));
    const fromQuery = await readStream(`${s.url}`, (ev) => ev.length >= all.length - cut, {});
    expect(fromQuery.events[0]!.seq).toBe(1);
    const r = await fetch(`${s.url}/events?after=${cut}`, { headers: auth });
    const frames = [];
    for await (const f of sseFrames(r.body!)) {
      if (f.event === 'log') frames.push(Number(f.id));
      if (frames.length === all.length - cut) break;
    }
    expect(frames).toEqual(all.filter((q) => q > cut));
    const bad = await fetch(`${s.url}/events`, { headers: { ...auth, 'last-event-id': '-1' } });
    expect(bad.status).toBe(400);
  });

  it('live frames: text deltas, stages, the turn state and which approvals this server can answer; none carries an id', async () => {
    server = await startWireServer(() => [{ text: 'Writing.', toolCalls: [{ toolName: 'write', input: { path: 'x.txt' } }] }, { text: 'Written.' }]);
    const s = await newSession(server);
    const reading = readStream(s.url, (_, live) => live.some((f) => f.type === 'answerable' && f.calls.length === 1));
    await post(`${s.url}/turns`, { input: 'write x' });
    const { live } = await reading;
    const kinds = new Set(live.map((f) => f.type));
    expect([...kinds].sort()).toEqual(['answerable', 'delta', 'hello', 'stage', 'turn']);
    expect(live.find((f) => f.type === 'turn')).toEqual({ type: 'turn', turnId: 'turn-1', state: 'queued', input: 'write x' });
    expect(live.filter((f) => f.type === 'stage').map((f) => f.type === 'stage' && `${f.event} ${f.stage}`)).toContain('entered awaitingApproval');
    expect(live.at(-1)).toEqual({ type: 'answerable', calls: [{ turnId: 'turn-1', stepIndex: 0, callId: expect.any(String) }] });
  });
});

describe('commands (SPEC §11.2)', () => {
  it('a retried POST with the same Idempotency-Key starts one turn and gets the same answer; the key with another body is refused', async () => {
    server = await startWireServer(() => [{ text: 'one' }, { text: 'two' }]);
    const s = await newSession(server);
    const key = { 'idempotency-key': 'same-key' };
    const [a, b] = await Promise.all([post(`${s.url}/turns`, { input: 'go' }, key), post(`${s.url}/turns`, { input: 'go' }, key)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await a.json()).toEqual(await b.json());
    const c = await post(`${s.url}/turns`, { input: 'another' }, key);
    expect(c.status).toBe(422);
    expect(((await c.json()) as { error: { code: string } }).error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    await until(() => ended(server!.session(s.id).rt.log.events() as LogEvent[]), 'the turn');
    expect(server.session(s.id).rt.log.events().filter((e) => e.type === 'turn/start')).toHaveLength(1);
  });

  it('two clients answer one approval at once: one wins, the other gets 409 with the winning answer; the body runs once; one answer is logged', async () => {
    server = await startWireServer(() => [{ text: 'Writing.', toolCalls: [{ toolName: 'write', input: { path: 'x.txt' } }] }, { text: 'Written.' }]);
    const s = await newSession(server);
    await post(`${s.url}/turns`, { input: 'write x' });
    const log = () => server!.session(s.id).rt.log.events() as LogEvent[];
    await until(() => log().some((e) => e.type === 'tool/approval-request'), 'the question');
    const approval = log().find((e) => e.type === 'tool/approval-request')!.seq;
    const [a, b] = await Promise.all([
      post(`${s.url}/approvals/${approval}`, { answer: 'allow-once' }),
      post(`${s.url}/approvals/${approval}`, { answer: 'deny', reason: 'no' }),
    ]);
    expect([a.status, b.status]).toEqual([200, 409]);
    const answerSeq = () => log().find((e) => e.type === 'tool/approval-answer')?.seq;
    expect(await b.json()).toEqual({ error: { code: 'ALREADY_ANSWERED', message: `approval ${approval} was already answered (allow-once)` }, winner: { answer: 'allow-once', seq: answerSeq() } });
    await until(() => ended(log()), 'the turn');
    expect(server.session(s.id).writes).toEqual(['x.txt']);
    expect(log().filter((e) => e.type === 'tool/approval-answer').map((e) => e.type === 'tool/approval-answer' && e.answer)).toEqual(['allowed-once']);
    // After the fact, from the log: the winner with its seq.
    const late = await post(`${s.url}/approvals/${approval}`, { answer: 'allow-always' });
    expect(late.status).toBe(409);
    expect(((await late.json()) as { winner: unknown }).winner).toEqual({ answer: 'allow-once', seq: answerSeq() });
  });

  it('a deny with a reason: the body never runs, and the reason reaches the model in the call result', async () => {
    server = await startWireServer(() => [{ text: 'Writing.', toolCalls: [{ toolName: 'write', input: { path: 'x.txt' } }] }, { text: 'Understood.' }]);
    const s = await newSession(server);
    await post(`${s.url}/turns`, { input: 'write x' });
    const log = () => server!.session(s.id).rt.log.events() as LogEvent[];
    await until(() => log().some((e) => e.type === 'tool/approval-request'), 'the question');
    const approval = log().find((e) => e.type === 'tool/approval-request')!.seq;
    const r = await post(`${s.url}/approvals/${approval}`, { answer: 'deny', reason: 'use notes.txt instead' });
    expect(r.status).toBe(200);
    await until(() => ended(log()), 'the turn');
    expect(server.session(s.id).writes).toEqual([]);
    const second = JSON.stringify(server.session(s.id).model.calls[1]!.prompt);
    expect(second).toContain('use notes.txt instead');
  });

  it('an approval nothing waits on, or that does not exist, is refused with its code', async () => {
    server = await startWireServer(() => [{ text: 'hi' }]);
    const s = await newSession(server);
    const r = await post(`${s.url}/approvals/1`, { answer: 'allow-once' });
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    // The command is checked before the session is looked at: a reason goes with a deny only.
    const bad = await post(`${s.url}/approvals/1`, { answer: 'allow-once', reason: 'why not' });
    expect(bad.status).toBe(400);
  });

  it('bad requests: not JSON (415), no key (428), too large (413), a body that does not check out (400), a reason on an allow (400), GET on a command (405)', async () => {
    server = await startWireServer(() => [{ text: 'hi' }], { maxBodyBytes: 1024 });
    const s = await newSession(server);
    const code = async (r: Response) => [r.status, ((await r.json()) as { error: { code: string } }).error.code];
    expect(await code(await post(`${s.url}/turns`, 'input=go', { 'content-type': 'application/x-www-form-urlencoded' }))).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    expect(await code(await fetch(`${s.url}/turns`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"input":"go"}' }))).toEqual([428, 'IDEMPOTENCY_KEY_REQUIRED']);
    expect(await code(await post(`${s.url}/turns`, { input: 'x'.repeat(5000) }))).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    expect(await code(await post(`${s.url}/turns`, { input: 'go', model: 'gpt-x' }))).toEqual([400, 'BAD_REQUEST']);
    expect(await code(await post(`${s.url}/turns`, '{"input":'))).toEqual([400, 'BAD_REQUEST']);
    expect(await code(await fetch(`${s.url}/turns`, { headers: auth }))).toEqual([405, 'METHOD_NOT_ALLOWED']);
    expect(await code(await fetch(`${server.base}/sessions/..%2F..%2Fetc/events`, { headers: auth }))).toEqual([404, 'NOT_FOUND']);
    expect(server.session(s.id).rt.log.events()).toEqual([]);
  });

  it('a POST that carries cookies from another origin is refused (CSRF); from the page\'s own origin it goes through', async () => {
    server = await startWireServer(() => [{ text: 'hi' }], { authorize: () => true });
    const s = await newSession(server);
    const cross = await post(`${s.url}/turns`, { input: 'go' }, { cookie: 'session=abc', origin: 'https://evil.example' });
    expect(cross.status).toBe(403);
    const noOrigin = await post(`${s.url}/turns`, { input: 'go' }, { cookie: 'session=abc' });
    expect(noOrigin.status).toBe(403);
    const own = new URL(s.url).origin;
    const same = await post(`${s.url}/turns`, { input: 'go' }, { cookie: 'session=abc', origin: own });
    expect(same.status).toBe(200);
  });
});

describe('a client that does not read', () => {
  it('is dropped once its queue passes the bound (the server holds no more), and resumes from its last seq with nothing lost', async () => {
    server = await startWireServer(() => [{ text: 'hi' }], { maxBufferedBytes: 64 * 1024 });
    const s = await newSession(server);
    const url = new URL(`${s.url}/events`);
    // A raw socket that sends its request and never reads a byte.
    const socket = connect(Number(url.port), url.hostname);
    socket.pause();
    let closed = false;
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    await until(() => server!.handler.connections() === 1, 'the stream opens');
    const log = server.session(s.id).rt.log;
    // Far more than the socket's buffers and the bound together.
    for (let i = 0; i < 20_000; i++) log.append({ type: 'warning', code: 'NOISE', message: `event ${i} ${'x'.repeat(200)}` });
    await until(() => server!.handler.connections() === 0, 'the stalled client is dropped');
    socket.destroy();
    await until(() => closed, 'the socket closes');
    const after = 19_000;
    const rest = await readStream(s.url, (ev) => ev.length === log.lastSeq - after, { 'last-event-id': String(after) });
    expect(rest.events.map((e) => e.seq)).toEqual(Array.from({ length: log.lastSeq - after }, (_, i) => after + 1 + i));
  });

  it('1,000 idle pages and one that never reads, during a 50,000-event turn: the server holds at most the documented bound, drops the non-reader, keeps the idle ones', async () => {
    const bound = 64 * 1024;
    server = await startWireServer(() => [{ text: 'hi' }], { maxBufferedBytes: bound });
    const busy = await newSession(server);
    const quiet = await newSession(server);
    // Two descriptors per connection in this process: fewer pages where the limit is low.
    const limit = Number(spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).stdout.trim()) || 1024;
    const idle = Math.min(1_000, Math.floor((limit - 200) / 2));
    if (idle < 1_000) console.warn(`open files limited to ${limit}: ${idle} idle pages instead of 1,000`);
    const raw = (url: string) => {
      const u = new URL(`${url}/events`);
      const socket = connect(Number(u.port), u.hostname);
      socket.pause();
      socket.on('error', () => undefined);
      socket.write(`GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
      return socket;
    };
    const sockets = Array.from({ length: idle }, () => raw(quiet.url));
    await until(() => server!.handler.connections() === idle, 'the idle pages follow');
    const stalled = raw(busy.url);
    sockets.push(stalled);
    await until(() => server!.handler.connections() === idle + 1, 'the non-reader follows');
    const log = server.session(busy.id).rt.log;
    let most = 0;
    for (let i = 0; i < 50_000; i++) {
      log.append({ type: 'warning', code: 'NOISE', message: `event ${i}` });
      if (i % 500 === 499) {
        most = Math.max(most, server.handler.bufferedBytes());
        await new Promise((r) => setImmediate(r));
      }
    }
    await until(() => server!.handler.connections() === idle, 'the non-reader is dropped');
    // docs/protocol.md: a page holds at most twice maxBufferedBytes and a frame; idle pages hold nothing.
    expect(most).toBeGreaterThan(bound / 2);
    expect(most).toBeLessThanOrEqual(2 * bound + 1024);
    expect(server.handler.bufferedBytes()).toBe(0);
    for (const socket of sockets) socket.destroy();
  }, 120_000);
});

