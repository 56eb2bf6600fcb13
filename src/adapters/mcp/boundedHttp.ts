/**
 * What a Streamable HTTP MCP server can make dsh hold is bounded, as stdio is by the SDK's 10 MiB
 * line buffer. `boundHttpAnswers` gives `StreamableHTTPClientTransport` a `fetch` whose response
 * bodies dsh reads itself before the SDK sees a byte:
 *
 * - an SSE body is passed on one whole event at a time: an event (so also a line that never ends)
 *   over `maxMessageBytes` is never handed on; the stream is stopped there;
 * - one POST's answer stream may carry `maxResponseBytes` in all (its answer and its
 *   notifications); any other body (a JSON answer) `maxMessageBytes`;
 * - a call that is cancelled (an abort, a time limit: the SDK then sends `notifications/cancelled`)
 *   has its answer stream aborted at once, so a server cannot keep streaming into a settled call;
 * - a POST's answer stream that stops (limit), is cut (a read fails) or ends without the answer,
 *   and cannot be resumed (it carried no event id), ends with a marker after its last event. When
 *   the client reaches the marker, every call of that stream still unanswered fails at once with
 *   the reason (`answersEnded`), instead of waiting for its call limit.
 *
 * A resumable stream (one with event ids) is left to the SDK's resumption, except past a limit:
 * then the resumption request is refused here, so a server cannot replay the oversized event.
 * Web-standard only (fetch, streams): no Node built-ins.
 */
import type { JSONRPCErrorResponse, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The SDK's stdio line buffer (`STDIO_DEFAULT_MAX_BUFFER_SIZE`): one message, either transport. */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** One POST's whole answer stream: its answer and every notification sent on it. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
/** Standalone event streams (GET) that broke a limit before dsh stops opening them. */
const MAX_GET_VIOLATIONS = 3;
/** The JSON-RPC error code of a call failed here (the SDK's `ConnectionClosed`). */
export const STREAM_ENDED_CODE = -32000;

export interface HttpLimits {
  /** Bytes one SSE event (and so one line) or one JSON answer may take. */
  maxMessageBytes: number;
  /** Bytes one POST's answer stream may take in all. */
  maxResponseBytes: number;
}

type Id = string | number;
type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** How a POST's answer stream ended without answering. */
export type StreamEndKind = 'limit' | 'cut' | 'ended';

export interface AnswersEnded {
  kind: StreamEndKind;
  reason: string;
  /** The synthetic error answers to hand to the client, one per call still waiting. */
  answers: JSONRPCErrorResponse[];
}

export interface BoundedHttp {
  /** Give this to `StreamableHTTPClientTransport` as its `fetch`. */
  readonly fetch: FetchLike;
  /**
   * Call for every message the transport delivers, before the client handles it. For the marker
   * that ends a broken answer stream it returns the error answers to deliver (in that order).
   */
  observe(message: JSONRPCMessage): AnswersEnded | undefined;
  /** Aborts every answer stream still open. */
  close(): void;
}

const MARKER_METHOD = 'notifications/dsh/answer-stream-ended';
const LF = 10;
const CR = 13;
const ID_FIELD = [0x69, 0x64, 0x3a]; // "id:"
const MAX_ID_BYTES = 1024;

class LimitError extends Error {}

const describe = (e: unknown): string => {
  try {
    return e instanceof Error ? e.message || e.name : String(e);
  } catch {
    return 'unknown error';
  }
};

function mediaType(header: string | null): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/** The request ids and the cancelled request ids in a body dsh itself sent (one message or a batch). */
function outgoing(body: unknown): { requests: Id[]; cancelled: Id[] } {
  const requests: Id[] = [];
  const cancelled: Id[] = [];
  if (typeof body !== 'string') return { requests, cancelled };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { requests, cancelled };
  }
  for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
    if (m === null || typeof m !== 'object') continue;
    const msg = m as { id?: unknown; method?: unknown; params?: { requestId?: unknown } };
    const isId = (v: unknown): v is Id => typeof v === 'string' || typeof v === 'number';
    if (typeof msg.method === 'string' && isId(msg.id)) requests.push(msg.id);
    if (msg.method === 'notifications/cancelled' && isId(msg.params?.requestId)) cancelled.push(msg.params.requestId);
  }
  return { requests, cancelled };
}

/**
 * Splits an SSE byte stream into whole events (each with the blank line that ends it), holding at
 * most one unfinished event; throws LimitError when that event or its current line passes `max`.
 */
class SseFramer {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private lineBytes = 0;
  private afterCR = false;
  private head: number[] = [];
  private idBytes: number[] | undefined;
  /** Whether an event id was seen (the SDK can then resume the stream). */
  resumable = false;
  /** The id of the last event handed on (what the SDK would resume from). */
  lastEventId: string | undefined;
  private eventId: string | undefined;

  constructor(private readonly max: number) {}

  /** The whole events completed by `chunk`, as byte runs to hand on in order. */
  feed(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    let start = 0;
    let i = 0;
    let nextLF = -2;
    let nextCR = -2;
    while (i < chunk.length) {
      if (this.afterCR) {
        this.afterCR = false;
        if (chunk[i] === LF) {
          i++;
          // The LF of a CRLF that ended an event goes out with it, not with the next event.
          if (start === i - 1 && this.pendingBytes === 0) {
            out.push(chunk.subarray(start, i));
            start = i;
          }
          continue;
        }
      }
      if (nextLF !== -1 && nextLF < i) nextLF = chunk.indexOf(LF, i);
      if (nextCR !== -1 && nextCR < i) nextCR = chunk.indexOf(CR, i);
      const j = nextLF === -1 ? nextCR : nextCR === -1 ? nextLF : Math.min(nextLF, nextCR);
      const end = j === -1 ? chunk.length : j;
      this.lineContent(chunk, i, end);
      if (j === -1) break;
      if (chunk[j] === CR) this.afterCR = true;
      i = j + 1;
      if (this.lineEnded()) {
        // A blank line: the event is whole.
        if (this.pendingBytes + (i - start) > this.max) throw new LimitError(`an SSE event over the ${this.max}-byte limit`);
        out.push(...this.pending, chunk.subarray(start, i));
        this.pending = [];
        this.pendingBytes = 0;
        start = i;
        if (this.eventId !== undefined) this.lastEventId = this.eventId;
        this.eventId = undefined;
      }
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingBytes += chunk.length - start;
      if (this.lineBytes > this.max) throw new LimitError(`an SSE line over the ${this.max}-byte limit that does not end`);
      if (this.pendingBytes > this.max) throw new LimitError(`an SSE event over the ${this.max}-byte limit`);
    }
    return out;
  }

  private lineContent(chunk: Uint8Array, from: number, to: number): void {
    const offset = this.lineBytes;
    for (let k = from; k < to && this.head.length < ID_FIELD.length; k++) this.head.push(chunk[k]!);
    if (this.idBytes === undefined && this.head.length === ID_FIELD.length && this.head.every((b, n) => b === ID_FIELD[n])) this.idBytes = [];
    if (this.idBytes !== undefined) {
      for (let k = from + Math.max(0, ID_FIELD.length - offset); k < to && this.idBytes.length <= MAX_ID_BYTES; k++) this.idBytes.push(chunk[k]!);
    }
    this.lineBytes += to - from;
    if (this.lineBytes > this.max) throw new LimitError(`an SSE line over the ${this.max}-byte limit that does not end`);
  }

  /** A line ended; true when it was blank (the end of an event). */
  private lineEnded(): boolean {
    const blank = this.lineBytes === 0;
    if (this.idBytes !== undefined) {
      // "id:" then an optional space: a non-empty value makes the stream resumable.
      let value = new TextDecoder().decode(new Uint8Array(this.idBytes));
      if (value.startsWith(' ')) value = value.slice(1);
      if (value !== '' && !value.includes('\0')) {
        this.resumable = true;
        this.eventId = value;
      }
    }
    this.lineBytes = 0;
    this.head = [];
    this.idBytes = undefined;
    return blank;
  }
}

/** The fetch and the marker watch for one connection (see the module comment). */
export function boundHttpAnswers(limits: HttpLimits, baseFetch: FetchLike = (u, i) => fetch(u, i)): BoundedHttp {
  const nonce = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  /** Calls sent and neither answered nor cancelled. */
  const open = new Set<Id>();
  /** The answer stream of each open call (several calls may share one stream). */
  const streams = new Map<Id, { cancel(): void }>();
  /** Event ids of streams stopped at a limit: their resumption is refused. */
  const refusedResumptions = new Set<string>();
  let getViolations = 0;
  let closed = false;

  const marker = (ids: Id[], kind: StreamEndKind, reason: string): Uint8Array =>
    new TextEncoder().encode(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: MARKER_METHOD, params: { nonce, ids, kind, reason } })}\n\n`);

  /** A body read within `max` bytes in all, then failed with the reason. */
  function capped(upstream: ReadableStream<Uint8Array>, max: number, ids: Id[]): ReadableStream<Uint8Array> {
    const reader = upstream.getReader();
    let total = 0;
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const r = await reader.read();
          if (r.done) return controller.close();
          total += r.value.byteLength;
          if (total > max) {
            for (const id of ids) open.delete(id);
            void reader.cancel().catch(() => {});
            return controller.error(new Error(`the server's answer is over the ${max}-byte limit (maxMessageBytes)`));
          }
          controller.enqueue(r.value);
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
  }

  /** An SSE body handed on whole event by whole event, within the limits (see the module comment). */
  function sse(upstream: ReadableStream<Uint8Array>, ids: Id[], maxTotal: number | undefined): ReadableStream<Uint8Array> {
    const reader = upstream.getReader();
    const framer = new SseFramer(limits.maxMessageBytes);
    const isAnswer = ids.length > 0;
    let total = 0;
    let cancelled = false;
    let done = false;
    const forget = () => {
      for (const id of ids) if (streams.get(id) === handle) streams.delete(id);
    };
    const handle = {
      cancel() {
        if (done) return;
        cancelled = true;
        void reader.cancel().catch(() => {});
      },
    };
    for (const id of ids) streams.set(id, handle);
    const finish = (controller: ReadableStreamDefaultController<Uint8Array>, kind: StreamEndKind | 'cancelled', reason: string, error?: unknown) => {
      done = true;
      forget();
      try {
        if (kind === 'limit' && framer.lastEventId !== undefined) refusedResumptions.add(framer.lastEventId);
        if (!isAnswer) {
          // The standalone stream: the SDK reports the break and reconnects (a limit counts).
          if (kind === 'limit') getViolations++;
          if (kind === 'limit' || kind === 'cut') return controller.error(error ?? new Error(reason));
          return controller.close();
        }
        if (kind === 'cancelled') return controller.close();
        if (framer.resumable && kind !== 'limit') {
          // The SDK resumes it from its last event id (a cut is reported to it as a break).
          return kind === 'cut' ? controller.error(error) : controller.close();
        }
        controller.enqueue(marker(ids, kind, reason));
        controller.close();
      } catch {
        // The reader already went away (the SDK cancelled it).
      }
    };
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          for (;;) {
            let r: ReadableStreamReadResult<Uint8Array>;
            try {
              r = await reader.read();
            } catch (e) {
              if (cancelled || closed) return finish(controller, 'cancelled', 'cancelled');
              return finish(controller, 'cut', `the server's answer stream was cut before the answer (${describe(e).slice(0, 200)})`, e);
            }
            if (cancelled || closed) return finish(controller, 'cancelled', 'cancelled');
            if (r.done) return finish(controller, 'ended', "the server's answer stream ended without the answer");
            let events: Uint8Array[];
            try {
              total += r.value.byteLength;
              if (maxTotal !== undefined && total > maxTotal) throw new LimitError(`an answer stream over the ${maxTotal}-byte limit (maxResponseBytes)`);
              events = framer.feed(r.value);
            } catch (e) {
              if (!(e instanceof LimitError)) throw e;
              void reader.cancel().catch(() => {});
              return finish(controller, 'limit', `the server sent ${e.message}; the answer was dropped`);
            }
            for (const ev of events) controller.enqueue(ev);
            if (events.length > 0) return;
          }
        },
        cancel(reason) {
          done = true;
          forget();
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
  }

  const boundedFetch: FetchLike = async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    const sent = method === 'POST' ? outgoing(init?.body) : { requests: [], cancelled: [] };
    for (const id of sent.cancelled) {
      open.delete(id);
      streams.get(id)?.cancel();
    }
    if (method === 'GET') {
      const resumeFrom = new Headers(init?.headers).get('last-event-id');
      if ((resumeFrom !== null && refusedResumptions.has(resumeFrom)) || getViolations >= MAX_GET_VIOLATIONS) {
        // What the SDK reads as "no event stream offered": it stops asking.
        return new Response(null, { status: 405, statusText: 'dsh: this event stream broke its size limit' });
      }
    }
    for (const id of sent.requests) open.add(id);
    let response: Response;
    try {
      response = await baseFetch(url, init);
    } catch (e) {
      for (const id of sent.requests) open.delete(id);
      throw e;
    }
    if (!response.ok || response.status === 202 || response.body === null) {
      if (!response.ok) for (const id of sent.requests) open.delete(id);
      return response;
    }
    const body =
      mediaType(response.headers.get('content-type')) === 'text/event-stream'
        ? sse(response.body, sent.requests, method === 'POST' ? limits.maxResponseBytes : undefined)
        : capped(response.body, limits.maxMessageBytes, sent.requests);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };

  return {
    fetch: boundedFetch,
    observe(message) {
      const m = message as { id?: unknown; method?: unknown; params?: { nonce?: unknown; ids?: unknown; kind?: unknown; reason?: unknown } };
      if (m.method === undefined && (typeof m.id === 'string' || typeof m.id === 'number')) {
        open.delete(m.id);
        return undefined;
      }
      if (m.method !== MARKER_METHOD || m.params?.nonce !== nonce || !Array.isArray(m.params.ids)) return undefined;
      const reason = String(m.params.reason);
      const kind = m.params.kind as StreamEndKind;
      const answers: JSONRPCErrorResponse[] = [];
      for (const id of m.params.ids as Id[]) {
        if (!open.delete(id)) continue;
        answers.push({ jsonrpc: '2.0', id, error: { code: STREAM_ENDED_CODE, message: reason, data: { dshAnswerStream: kind } } });
      }
      return { kind, reason, answers };
    },
    close() {
      closed = true;
      for (const s of new Set(streams.values())) s.cancel();
      streams.clear();
      open.clear();
    },
  };
}
