// The inspector's server as another local program would meet it: loopback only; the page only
// with its token; the session over the wire protocol (docs/protocol.md), every API request with the
// token; a request for another Host (DNS rebinding) refused. A running session's questions are
// answered through the page's inbox, once; a recorded session takes no commands and no answers.
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectedSession, type InspectedSession } from '../../src/cli/inspect/inspectedSession.js';
import { pageOrTerminal } from '../../src/cli/inspect/pageOrTerminal.js';
import { inspectedSessionId, startInspector, type InspectorServer } from '../../src/cli/inspect/server.js';
import { createMemoryLog } from '../../src/runtime/log/sessionLog.js';
import { mirroredLog } from '../../src/server/mirroredLog.js';
import { createApprovalInbox } from '../../src/view/approvalInbox.js';

let server: InspectorServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw request (a chosen Host header); with `until`, the body read until it matches, then dropped. */
function call(port: number, path: string, o: { method?: string; headers?: Record<string, string>; body?: string; until?: RegExp } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: o.method ?? 'GET', headers: o.headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
        if (o.until?.test(body)) {
          resolve({ status: res.statusCode!, headers: res.headers, body });
          res.destroy();
        }
      });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

/** A running session (dsh run --inspect): its log, the page's inbox asked beside no terminal. */
async function running() {
  const log = createMemoryLog();
  log.append({ type: 'turn/start', turnId: 'turn-1', input: 'hi' });
  log.append({ type: 'step/start', turnId: 'turn-1', stepIndex: 0 });
  const inbox = createApprovalInbox();
  const inspected = inspectedSession({ id: 'run-1', log, live: true, approvals: inbox });
  server = await startInspector({ sessionId: 'run-1', session: inspected.session, title: 'a run' });
  const url = new URL(server.url);
  const token = url.searchParams.get('t')!;
  const api = `${url.origin}/api/sessions/run-1`;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${api}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': crypto.randomUUID(), ...headers } });
  return { log, inbox, inspected, url, token, api, post, port: server.port };
}

/** Asks the question a call's pipeline would: its `tool/approval-request` in the log, then the inbox. */
function ask(log: ReturnType<typeof createMemoryLog>, inbox: ReturnType<typeof createApprovalInbox>, callId: string) {
  log.append({ type: 'tool/call', turnId: 'turn-1', stepIndex: 0, callId, toolName: 'bash', input: '{"command":"rm -rf /"}', index: 0, executionMode: 'exclusive' });
  const seq = log.append({ type: 'tool/approval-request', turnId: 'turn-1', stepIndex: 0, callId, toolName: 'bash', reason: 'a command' }).seq;
  const answer = pageOrTerminal(inbox, undefined).request({ callId, toolName: 'bash', args: { command: 'rm -rf /' } }, new AbortController().signal);
  return { seq, answer };
}

describe('the inspector server', () => {
  it('listens on 127.0.0.1 at a random port, and serves the page only with its token; the page names its session', async () => {
    const { url, port, token } = await running();
    expect(url.hostname).toBe('127.0.0.1');
    expect(port).toBeGreaterThan(0);
    expect(token.length).toBeGreaterThanOrEqual(32);
    const page = await call(port, `/?t=${token}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<script type="module" src="/assets/main.js">');
    expect(page.body).toContain('<meta name="dsh-session" content="run-1">');
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'self'/);
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect((await call(port, '/')).status).toBe(403);
    expect((await call(port, '/?t=wrong')).status).toBe(403);
  });

  it('serves every asset itself: the page modules, the stylesheet, the diagrams (no <style> left in them)', async () => {
    const { port } = await running();
    for (const m of ['main', 'model', 'render', 'timeline']) {
      const r = await call(port, `/assets/${m}.js`);
      expect(r.status, m).toBe(200);
      expect(r.headers['content-type']).toMatch(/^text\/javascript/);
      expect(r.body).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
    }
    // The stage names the page shares with the machines: served from machines/, defined once.
    const names = await call(port, '/machines/callStageNames.js');
    expect(names.status).toBe(200);
    expect(names.body).toMatch(/CALL_STAGE_NAMES = \["validating", "preExecute", "awaitingApproval", "guard", "executing", "postExecute", "finalizing"\]/);
    expect((await call(port, '/machines/toolCall.js')).status).toBe(404);
    const css = await call(port, '/assets/style.css');
    expect(css.body).toContain('.diagram svg .state {');
    for (const d of ['turn', 'step', 'scheduler', 'toolCall']) {
      const r = await call(port, `/diagrams/${d}.svg`);
      expect(r.status).toBe(200);
      expect(r.body).toMatch(/^<svg/);
      expect(r.body).not.toContain('<style>');
      expect(r.body).toContain('data-state=');
    }
    expect((await call(port, '/assets/../server.js')).status).toBe(404);
    expect((await call(port, '/diagrams/nope.svg')).status).toBe(404);
    expect((await call(port, '/assets/main.js', { method: 'POST' })).status).toBe(405);
  });

  it('refuses a request for another Host (DNS rebinding), even with the token', async () => {
    const { port, token } = await running();
    expect((await call(port, `/?t=${token}`, { headers: { host: 'evil.example:80' } })).status).toBe(403);
    expect((await call(port, `/api/sessions/run-1/events?token=${token}`, { headers: { host: `evil.example:${port}` } })).status).toBe(403);
  });

  it('serves the session over the wire protocol, only with the token: the log by seq, then whether it can still grow', async () => {
    const { port, token, inspected } = await running();
    expect((await call(port, '/api/sessions/run-1/events')).status).toBe(401);
    expect((await call(port, '/api/sessions/run-1/events?token=guess')).status).toBe(401);
    expect((await call(port, '/api/sessions/other/events', { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
    const list = await call(port, '/api/sessions', { headers: { authorization: `Bearer ${token}` } });
    expect(JSON.parse(list.body)).toEqual({ sessions: [{ id: 'run-1', lastSeq: 2, title: 'hi' }] });
    const r = await call(port, `/api/sessions/run-1/events?token=${token}`, { until: /"type":"session"/ });
    expect(r.headers['content-type']).toMatch(/^text\/event-stream/);
    expect([...r.body.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([1, 2]);
    expect(r.body).toContain('data: {"type":"session","live":true}');
    // The actor states an inspector highlights go out as live frames; only a change is news.
    const frames: unknown[] = [];
    inspected.session.onLive((f) => frames.push(f));
    inspected.actor({ kind: 'turn', key: 'turn-1', state: 'running', time: 5 });
    inspected.actor({ kind: 'turn', key: 'turn-1', state: 'running', time: 6 });
    inspected.end();
    expect(frames).toEqual([{ type: 'actor', kind: 'turn', key: 'turn-1', state: 'running', at: 5 }, { type: 'session', live: false }]);
    const after = await call(port, `/api/sessions/run-1/events?token=${token}&after=2`, { until: /"type":"session"/ });
    expect(after.body).not.toMatch(/^id: /m);
    expect(after.body).toContain('{"type":"actor","kind":"turn","key":"turn-1","state":"running","at":5}');
    expect(after.body).toContain('{"type":"session","live":false}');
  });

  it("a running session's question is answerable over the wire, once: the first answer wins and reaches the run", async () => {
    const { log, inbox, post, token, port } = await running();
    const q = ask(log, inbox, 'call-1-0');
    const stream = await call(port, `/api/sessions/run-1/events?token=${token}`, { until: /"type":"answerable","calls":\[\{/ });
    expect(stream.body).toContain('{"type":"answerable","calls":[{"turnId":"turn-1","stepIndex":0,"callId":"call-1-0"}]}');
    expect((await post(`/approvals/${q.seq}`, { answer: 'allow-once' }, { authorization: 'Bearer guess' })).status).toBe(401);
    expect((await post(`/approvals/${q.seq}`, { answer: 'yes please' })).status).toBe(400);
    expect((await post(`/approvals/${q.seq}`, { answer: 'x'.repeat(100_000) })).status).toBe(413);
    expect((await post('/approvals/1', { answer: 'deny' })).status).toBe(404);
    expect(inbox.questions()).toHaveLength(1);
    const ok = await post(`/approvals/${q.seq}`, { answer: 'deny', reason: 'not on a Friday' });
    expect(ok.status).toBe(200);
    await expect(q.answer).resolves.toEqual({ answer: 'denied', reason: 'not on a Friday' });
    expect(inbox.questions()).toEqual([]);
    const late = await post(`/approvals/${q.seq}`, { answer: 'allow-once' });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ error: { code: 'ALREADY_ANSWERED' }, winner: { answer: 'deny', reason: 'not on a Friday' } });
  });

  it('takes no commands: the run (or nobody) drives the session', async () => {
    const { post } = await running();
    for (const [path, body] of [['/turns', { input: 'hi' }], ['/follow-ups', { input: 'and' }], ['/resume', {}]] as const) {
      const r = await post(path, body);
      expect(r.status, path).toBe(409);
      expect(await r.json(), path).toMatchObject({ error: { code: 'CONFLICT', message: expect.stringContaining('takes no commands') } });
    }
    // Its turns are not this server's to steer or cancel.
    expect((await post('/steer', { turnId: 'turn-1', message: 'x' })).status).toBe(404);
    expect((await post('/cancel', { turnId: 'turn-1' })).status).toBe(404);
  });

  it('a recorded session takes no answers, and says it will not grow', async () => {
    const log = createMemoryLog();
    log.append({ type: 'turn/start', turnId: 'turn-1', input: 'old' });
    const seq = log.append({ type: 'tool/approval-request', turnId: 'turn-1', stepIndex: 0, callId: 'c', toolName: 'bash' }).seq;
    const recorded: InspectedSession = inspectedSession({ id: 'old', log: mirroredLog(log.events()).log, live: false });
    server = await startInspector({ sessionId: 'old', session: recorded.session, title: 'old.jsonl' });
    const { origin, searchParams } = new URL(server.url);
    const token = searchParams.get('t')!;
    const r = await fetch(`${origin}/api/sessions/old/approvals/${seq}`, { method: 'POST', body: '{"answer":"deny"}', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': 'k1' } });
    expect(r.status).toBe(409);
    expect(await r.json()).toMatchObject({ error: { code: 'NOT_WAITING' } });
    const stream = await call(server.port, `/api/sessions/old/events?token=${token}`, { until: /"type":"session"/ });
    expect(stream.body).toContain('{"type":"session","live":false}');
  });

  it('names a log file as the API can: its name without .jsonl, else "session"', () => {
    expect(inspectedSessionId('20261203-101010-ab12.jsonl')).toBe('20261203-101010-ab12');
    expect(inspectedSessionId('../x y.jsonl')).toBe('session');
    expect(inspectedSessionId('.hidden.jsonl')).toBe('session');
  });
});
