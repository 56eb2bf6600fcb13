/**
 * The inspector's local web server (node:http): loopback only (127.0.0.1), a random free port,
 * every asset from this package. The page's URL carries a random token; every data request and
 * every answer needs it. Requests whose Host is not this server (DNS rebinding) are refused, and
 * an answer (POST) must come from this server's own origin, as JSON, with the token.
 *
 *   GET  /?t=TOKEN                 the page
 *   GET  /assets/<module>.js        the page's ES modules; /assets/style.css its stylesheet
 *   GET  /diagrams/<machine>.svg    the generated statechart of a machine
 *   GET  /api/stream?t=TOKEN        Server-Sent Events: `init` (everything so far), then `log`,
 *                                   `actor`, `approvals`, `live` as they happen
 *   POST /api/approve               {"callId", "answer": "allowed-once"|"allowed-always"|"denied", "reason"?: string (with "denied")}
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApprovalAnswerSchema } from '../../protocol/index.js';
import { describeError } from '../describeError.js';
import { diagramSvg, pageModule, pageStylesheet } from './assets.js';
import type { FeedMessage, InspectorFeed } from './feed.js';
import type { PageApprovals } from './pageApprovals.js';

export interface InspectorServer {
  /** The page's URL, with its token. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export interface InspectorOptions {
  feed: InspectorFeed;
  /** Where the page's answers go; without it the page shows questions but cannot answer them. */
  approvals?: Pick<PageApprovals, 'answer'>;
  /** Default: a random free port. */
  port?: number;
}

const MAX_BODY = 4096;

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

const PAGE = (title: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dsh inspect: ${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/style.css">
<script type="module" src="/assets/main.js"></script>
</head>
<body>
<noscript>The dsh inspector needs JavaScript.</noscript>
</body>
</html>
`;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export async function startInspector(options: InspectorOptions): Promise<InspectorServer> {
  const token = randomBytes(24).toString('base64url');
  const streams = new Set<ServerResponse>();
  let port = 0;

  const tokenOk = (given: string | null | undefined) => {
    if (typeof given !== 'string') return false;
    const a = Buffer.from(given);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  };
  const hostOk = (req: IncomingMessage) => req.headers.host === `127.0.0.1:${port}` || req.headers.host === `localhost:${port}`;
  const originOk = (req: IncomingMessage) => req.headers.origin === `http://127.0.0.1:${port}` || req.headers.origin === `http://localhost:${port}`;

  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': `${type}; charset=utf-8`, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const fail = (res: ServerResponse, status: number, message: string) => send(res, status, 'text/plain', `${message}\n`);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!hostOk(req)) return fail(res, 403, 'wrong Host');
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    const path = url.pathname;
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (path === '/') {
        if (!tokenOk(url.searchParams.get('t'))) return fail(res, 403, 'open the URL dsh printed (it carries the token)');
        return send(res, 200, 'text/html', PAGE(options.feed.snapshot().title));
      }
      if (path === '/assets/style.css') return send(res, 200, 'text/css', pageStylesheet());
      let m = /^\/assets\/([a-z]+)\.js$/.exec(path);
      if (m) {
        const js = await pageModule(m[1]!);
        return js === undefined ? fail(res, 404, 'not found') : send(res, 200, 'text/javascript', js);
      }
      m = /^\/diagrams\/([A-Za-z]+)\.svg$/.exec(path);
      if (m) {
        const svg = diagramSvg(m[1]!);
        return svg === undefined ? fail(res, 404, 'not found') : send(res, 200, 'image/svg+xml', svg);
      }
      if (path === '/api/stream') {
        if (!tokenOk(url.searchParams.get('t'))) return fail(res, 403, 'bad token');
        return stream(res);
      }
      return fail(res, 404, 'not found');
    }
    if (req.method === 'POST' && path === '/api/approve') {
      if (!originOk(req)) return fail(res, 403, 'wrong Origin');
      if (!tokenOk(req.headers['x-dsh-token'] as string | undefined)) return fail(res, 403, 'bad token');
      if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) return fail(res, 415, 'JSON only');
      const body = await readBody(req);
      if (body === undefined) {
        res.setHeader('connection', 'close');
        return fail(res, 413, 'too large');
      }
      let parsed: { callId?: unknown; answer?: unknown; reason?: unknown };
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        return fail(res, 400, 'not JSON');
      }
      const answer = ApprovalAnswerSchema.safeParse(parsed?.answer);
      const reason = parsed?.reason;
      const reasonOk = reason === undefined || (typeof reason === 'string' && answer.success && answer.data === 'denied');
      if (typeof parsed?.callId !== 'string' || !answer.success || !reasonOk) return fail(res, 400, 'expected {"callId": string, "answer": "allowed-once" | "allowed-always" | "denied", "reason"?: string (with "denied")}');
      if (!options.approvals) return fail(res, 409, 'this session takes no answers (it is not running)');
      // A deny's reason goes on to the model (the pipeline bounds it and makes it visible).
      const given = typeof reason === 'string' && reason.trim() ? { answer: 'denied' as const, reason } : answer.data;
      if (!options.approvals.answer(parsed.callId, given)) return fail(res, 409, `no question is waiting for ${parsed.callId}`);
      return send(res, 200, 'application/json', JSON.stringify({ ok: true }));
    }
    return fail(res, 405, 'method not allowed');
  };

  function stream(res: ServerResponse): void {
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    const write = (type: string, data: unknown) => res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
    // Subscribed before the snapshot is taken, so nothing falls between the two: the page drops
    // log events it already has (by seq).
    const queued: FeedMessage[] = [];
    let ready = false;
    const unsubscribe = options.feed.subscribe((m) => {
      if (!ready) queued.push(m);
      else write(m.type, m);
    });
    write('init', options.feed.snapshot());
    ready = true;
    for (const m of queued) write(m.type, m);
    const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
    ping.unref();
    streams.add(res);
    res.on('close', () => {
      clearInterval(ping);
      unsubscribe();
      streams.delete(res);
    });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) fail(res, 500, describeError(e));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/?t=${token}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of streams) s.end();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      // Too large: answered 413 at once; the rest is read and dropped (the connection then closes).
      if (size > MAX_BODY) resolve(undefined);
      else chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_BODY ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
