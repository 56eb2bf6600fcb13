/**
 * Sessions served over the wire protocol on loopback, with a token: what `dsh serve` and the
 * inspector (`dsh inspect`, `dsh run --inspect`) both run. It listens on 127.0.0.1 only; a request
 * whose Host is not this server is refused before anything else (DNS rebinding); every API request
 * (`/api/…`, docs/protocol.md) needs the token, as `Authorization: Bearer TOKEN` or `?token=TOKEN`
 * (for `EventSource`). Other paths go to `page` (the inspector's page and its assets), else 404.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSessionHandler, type SessionDirectory } from '../../server/sessionHandler.js';
import { toNodeListener } from '../../server/nodeListener.js';

export interface LoopbackServer {
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  readonly port: number;
  readonly token: string;
  /** Ends every stream and stops listening. */
  close(): Promise<void>;
}

export interface LoopbackServerOptions {
  readonly sessions: SessionDirectory;
  /** Default: a random free port. */
  readonly port?: number;
  /**
   * Answers a request outside `/api/` (GET or HEAD only); `tokenOk` checks a token it was given.
   * Returns false when it has nothing at that path (404).
   */
  readonly page?: (req: IncomingMessage, res: ServerResponse, url: URL, tokenOk: (given: string | null) => boolean) => boolean | Promise<boolean>;
}

const API = '/api';

export async function serveOnLoopback(options: LoopbackServerOptions): Promise<LoopbackServer> {
  const token = randomBytes(24).toString('base64url');
  const tokenOk = (given: string | null) => {
    if (given === null) return false;
    const a = Buffer.from(given);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  };
  const handler = createSessionHandler({
    sessions: options.sessions,
    basePath: API,
    authorize: (request) => {
      const bearer = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1] ?? null;
      return tokenOk(bearer ?? new URL(request.url).searchParams.get('token')) || 'unauthenticated';
    },
  });
  const api = toNodeListener(handler);
  let port = 0;
  const plain = (res: ServerResponse, status: number, text: string) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
    res.end(`${text}\n`);
  };
  const server = createServer((req, res) => {
    const host = req.headers.host;
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) return plain(res, 403, 'wrong Host');
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
    if (url.pathname === API || url.pathname.startsWith(`${API}/`)) return api(req, res);
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'method not allowed');
    const page = options.page;
    if (!page) return plain(res, 404, 'not found');
    Promise.resolve(page(req, res, url, tokenOk)).then(
      (served) => {
        if (!served) plain(res, 404, 'not found');
      },
      () => {
        if (!res.headersSent) plain(res, 500, 'the page could not be served');
        else res.destroy();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    token,
    async close() {
      handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
