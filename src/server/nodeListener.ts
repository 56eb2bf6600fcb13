/**
 * A Fetch API handler (`createSessionHandler`) as a `node:http` request listener:
 * `createServer(toNodeListener(handler)).listen(…)`. The request body streams into the handler; the
 * response body is written as the socket takes it (a page that does not read holds back the
 * handler's stream, which drops it past its bound, and this then ends the socket). A request whose
 * socket closes aborts its `Request.signal`. Node only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/** How `toNodeListener` makes a Fetch request of a `node:http` one. */
export interface NodeListenerOptions {
  /**
   * The origin requests are taken to be sent to, when the listener runs behind a proxy that
   * rewrites Host (default: `http://` + the request's Host header).
   */
  readonly origin?: string;
}

/** A Fetch API handler: a request in, a response out (`createSessionHandler` returns one). */
export type FetchHandler = (request: Request) => Promise<Response>;

/** A `node:http` request listener that runs a Fetch API handler, streaming the response (`http.createServer(toNodeListener(handler))`). */
export function toNodeListener(handler: FetchHandler, options: NodeListenerOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void serve(handler, req, res, options).catch(() => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('internal error\n');
      } else res.destroy();
    });
  };
}

async function serve(handler: FetchHandler, req: IncomingMessage, res: ServerResponse, options: NodeListenerOptions): Promise<void> {
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  const origin = options.origin ?? `http://${req.headers.host ?? 'localhost'}`;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  // `duplex: 'half'` is how a streamed request body is declared (Node's fetch requires it).
  const init: RequestInit & { duplex?: 'half' } = { method: req.method ?? 'GET', headers, signal: abort.signal };
  if (hasBody) {
    init.body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
    init.duplex = 'half';
  }
  const request = new Request(new URL(req.url ?? '/', origin), init);
  const response = await handler(request);
  const out: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    out[name] = name === 'set-cookie' ? response.headers.getSetCookie() : value;
  });
  res.writeHead(response.status, out);
  if (!response.body) {
    res.end();
    return;
  }
  // Streams (SSE) go out as written, not held back by Nagle.
  res.socket?.setNoDelay(true);
  res.flushHeaders();
  const reader = response.body.getReader();
  abort.signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined), { once: true });
  // A stream ended with an error while this waits for the socket to drain (a page that reads
  // nothing never drains it): the socket is cut at once, and what it buffered goes with it.
  reader.closed.catch(() => res.destroy());
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.on('drain', go);
          res.on('close', go);
        });
        if (abort.signal.aborted) return;
      }
    }
    res.end();
  } catch {
    // The handler ended the stream with an error (a page dropped for falling behind): cut the socket.
    res.destroy();
  }
}
