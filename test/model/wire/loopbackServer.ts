/**
 * A loopback HTTP server that answers each request with the next scripted reply: a JSON error with
 * a status and headers, or an SSE stream (optionally cut off by destroying the socket mid-stream).
 * It records every request body, so tests can check what the provider package sent.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type WireReply =
  | { kind: 'json'; status: number; headers?: Record<string, string>; body: unknown }
  | {
      kind: 'sse';
      /** Each entry is one SSE event: `data:` only (OpenAI) or with an `event:` name (Anthropic). */
      events: readonly { event?: string; data: unknown }[];
      /** Destroy the socket after this many events instead of ending the response. */
      dropAfter?: number;
      /** Hold the response after this many events until `until` settles (then `onResume` runs). */
      gate?: { after: number; until: Promise<unknown>; onResume?: () => void };
    };

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: any;
}

export interface LoopbackServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Queue replies; each request takes the next one (a request beyond the script gets a 500). */
  reply(...replies: WireReply[]): void;
  close(): Promise<void>;
}

/** `fallback`: the reply to a request beyond the script (default: a 500 saying so). */
export async function startLoopbackServer(options: { fallback?: WireReply } = {}): Promise<LoopbackServer> {
  const queue: WireReply[] = [];
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* keep the text */
      }
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      void answer(queue.shift() ?? options.fallback, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function answer(reply: WireReply | undefined, res: ServerResponse) {
  if (!reply) {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'the test script has no reply for this request', type: 'server_error' } }));
    return;
  }
  if (reply.kind === 'json') {
    res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    res.end(JSON.stringify(reply.body));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const events = reply.dropAfter === undefined ? reply.events : reply.events.slice(0, reply.dropAfter);
  for (const [i, e] of events.entries()) {
    if (reply.gate && i === reply.gate.after) {
      await reply.gate.until.catch(() => undefined);
      reply.gate.onResume?.();
    }
    const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
    res.write(`${e.event !== undefined ? `event: ${e.event}\n` : ''}data: ${data}\n\n`);
  }
  if (reply.dropAfter !== undefined) {
    // The connection dies mid-response: no terminating chunk, no [DONE]. Destroyed once what was
    // written has been handed to the kernel, so the client reads it before the connection dies.
    res.write('', () => setImmediate(() => res.socket?.destroy()));
    return;
  }
  res.end();
}
