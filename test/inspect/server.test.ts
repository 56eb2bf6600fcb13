// The inspector's server as another local program would meet it: loopback only, the page and
// its data only with the token, answers only from its own origin, as JSON, with the token; a
// request for another Host (DNS rebinding) is refused. Answers reach the run's approval service.
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalAnswer } from '../../src/protocol/index.js';
import { liveFeed } from '../../src/cli/inspect/feed.js';
import { pageApprovals } from '../../src/cli/inspect/pageApprovals.js';
import { startInspector, type InspectorServer } from '../../src/cli/inspect/server.js';
import { createMemoryLog } from '../../src/runtime/log/sessionLog.js';

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

function call(port: number, path: string, o: { method?: string; headers?: Record<string, string>; body?: string; firstChunk?: boolean } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: o.method ?? 'GET', headers: o.headers }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
        if (o.firstChunk && body.includes('\n\n')) {
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

async function setup() {
  const feed = liveFeed('test session');
  const log = createMemoryLog();
  log.append({ type: 'turn/start', turnId: 'turn-1', input: 'hi' });
  feed.attachLog(log);
  const approvals = pageApprovals(undefined);
  approvals.onChange((p) => feed.setPending(p));
  server = await startInspector({ feed, approvals });
  const url = new URL(server.url);
  const token = url.searchParams.get('t')!;
  const origin = `http://127.0.0.1:${server.port}`;
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    call(server!.port, '/api/approve', { method: 'POST', body: JSON.stringify(body), headers: { host: `127.0.0.1:${server!.port}`, origin, 'content-type': 'application/json', 'x-dsh-token': token, ...headers } });
  return { feed, log, approvals, token, url, post, port: server.port };
}

describe('the inspector server', () => {
  it('listens on 127.0.0.1 at a random port, and serves the page only with its token', async () => {
    const { url, port, token } = await setup();
    expect(url.hostname).toBe('127.0.0.1');
    expect(port).toBeGreaterThan(0);
    expect(token.length).toBeGreaterThanOrEqual(32);
    const page = await call(port, `/?t=${token}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<script type="module" src="/assets/main.js">');
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'self'/);
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect((await call(port, '/')).status).toBe(403);
    expect((await call(port, '/?t=wrong')).status).toBe(403);
    expect((await call(port, `/api/stream?t=${token}x`)).status).toBe(403);
  });

  it('serves every asset itself: the page modules, the stylesheet, the diagrams (no <style> left in them)', async () => {
    const { port } = await setup();
    for (const m of ['main', 'model', 'render', 'timeline']) {
      const r = await call(port, `/assets/${m}.js`);
      expect(r.status, m).toBe(200);
      expect(r.headers['content-type']).toMatch(/^text\/javascript/);
      expect(r.body).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
    }
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
  });

  it('refuses a request for another Host (DNS rebinding), even with the token', async () => {
    const { port, token } = await setup();
    expect((await call(port, `/?t=${token}`, { headers: { host: 'evil.example:80' } })).status).toBe(403);
    expect((await call(port, `/api/stream?t=${token}`, { headers: { host: `evil.example:${port}` } })).status).toBe(403);
  });

  it('streams the session: init with everything so far, then each new event', async () => {
    const { port, token } = await setup();
    const r = await call(port, `/api/stream?t=${token}`, { firstChunk: true });
    expect(r.headers['content-type']).toMatch(/^text\/event-stream/);
    const init = JSON.parse(/^event: init\ndata: (.*)$/m.exec(r.body)![1]!) as { title: string; live: boolean; events: Array<{ type: string }> };
    expect(init).toMatchObject({ title: 'test session', live: true });
    expect(init.events.map((e) => e.type)).toEqual(['turn/start']);
  });

  it('takes an answer only from its own origin, as JSON, with the token; it reaches the approval service', async () => {
    const { approvals, post, port } = await setup();
    const asked = approvals.service.request({ callId: 'call-1-0', toolName: 'bash', args: { command: 'rm -rf /' } }, new AbortController().signal);
    expect(approvals.pending()).toEqual([{ callId: 'call-1-0', toolName: 'bash', args: 'rm -rf /' }]);
    expect((await post({ callId: 'call-1-0', answer: 'allowed-once' }, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await post({ callId: 'call-1-0', answer: 'allowed-once' }, { origin: `http://127.0.0.1:${port + 1}` })).status).toBe(403);
    expect((await post({ callId: 'call-1-0', answer: 'allowed-once' }, { 'x-dsh-token': 'guess' })).status).toBe(403);
    expect((await post({ callId: 'call-1-0', answer: 'allowed-once' }, { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post({ callId: 'call-1-0', answer: 'yes please' })).status).toBe(400);
    expect((await post({ callId: 'call-9-9', answer: 'denied' })).status).toBe(409);
    expect((await post({ callId: 'call-1-0', answer: 'x'.repeat(10_000) })).status).toBe(413);
    expect(approvals.pending()).toHaveLength(1);
    const ok = await post({ callId: 'call-1-0', answer: 'allowed-always' });
    expect(ok.status).toBe(200);
    await expect(asked).resolves.toBe('allowed-always' satisfies ApprovalAnswer);
    expect(approvals.pending()).toEqual([]);
    // Answered once: a second answer finds no question.
    expect((await post({ callId: 'call-1-0', answer: 'denied' })).status).toBe(409);
  });

  it('a recorded session takes no answers', async () => {
    const { recordedFeed } = await import('../../src/cli/inspect/feed.js');
    server = await startInspector({ feed: recordedFeed('old', []) });
    const token = new URL(server.url).searchParams.get('t')!;
    const r = await call(server.port, '/api/approve', { method: 'POST', body: '{"callId":"c","answer":"denied"}', headers: { origin: `http://127.0.0.1:${server.port}`, 'content-type': 'application/json', 'x-dsh-token': token } });
    expect(r.status).toBe(409);
  });
});
