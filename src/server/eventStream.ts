/**
 * One page's connection to a session: a Server-Sent Events body. First a `hello` (the protocol
 * version, the server's `lastSeq`), then every log event after the page's `after` (each with its
 * `seq` as the SSE `id`), then the session's live state, then whatever happens, in order: durable
 * log events and live frames. A page that does not read is not waited for: once more than
 * `maxBufferedBytes` wait in its queue, its stream is ended with an error and everything queued is
 * dropped; it reconnects and resumes from the last `seq` it applied. Browser-safe.
 */
import type { LogEvent } from '../protocol/index.js';
import { LIVE_FRAME, LOG_FRAME, WIRE_PROTOCOL_VERSION, type LiveFrame } from '../protocol/wire.js';
import type { DurableFeed } from './durableFeed.js';
import type { HostedSession } from './hostedSession.js';

export interface EventStreamOptions {
  readonly session: HostedSession;
  readonly feed: DurableFeed;
  /** The last `seq` the page applied (0: from the start). */
  readonly after: number;
  /** Bytes a connection may have waiting before it is dropped. */
  readonly maxBufferedBytes: number;
  /** A comment line every so often keeps proxies from closing an idle stream (ms; 0: none). */
  readonly heartbeatMs: number;
  /** Ends the stream when the request is aborted (the page went away). */
  readonly signal?: AbortSignal;
  /**
   * The bytes of a log event's or a live frame's SSE frame: the handler makes each once and shares
   * it between connections (default: made per connection).
   */
  readonly frameBytes?: (item: LogEvent | LiveFrame) => Uint8Array;
  /**
   * Told when the stream starts following the session, with a probe of the bytes it holds for its
   * page now (its queue, what waits behind it, what happened during the backlog), and once when
   * it stops (closed, dropped, cancelled).
   */
  readonly onOpen?: (buffered: () => number) => void;
  readonly onClose?: (buffered: () => number) => void;
}

const encoder = new TextEncoder();

/** The SSE text of a log event frame. */
export const logFrame = (e: LogEvent): string => `id: ${e.seq}\nevent: ${LOG_FRAME}\ndata: ${JSON.stringify(e)}\n\n`;
/** The SSE text of a live frame (no `id`: it moves no cursor). */
export const liveFrame = (f: LiveFrame): string => `event: ${LIVE_FRAME}\ndata: ${JSON.stringify(f)}\n\n`;

/** The bytes of the SSE frame of a log event (it has a `seq`) or a live frame. */
export const frameBytesOf = (item: LogEvent | LiveFrame): Uint8Array => encoder.encode('seq' in item ? logFrame(item) : liveFrame(item));

/** Thrown into a stream whose reader fell too far behind. */
export class SlowClientError extends Error {
  constructor(bytes: number) {
    super(`the client fell ${bytes} bytes behind; it resumes from its last seq when it reconnects`);
    this.name = 'SlowClientError';
  }
}

export function sessionEventStream(options: EventStreamOptions): ReadableStream<Uint8Array> {
  const { session, feed } = options;
  const bound = options.maxBufferedBytes;
  let cleanup = () => {};
  /** Moves waiting frames into the stream's queue as the reader makes room (set in `start`). */
  let pump = () => {};
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        /** `seq` of the last log event queued. */
        let sent = options.after;
        let open = true;
        let backlogDone = false;
        /** Frames waiting for room in the queue, oldest first; past `bound` bytes the reader is dropped. */
        const outbox: Uint8Array[] = [];
        let outboxBytes = 0;
        /** Frames that happen while the backlog is read: sent after it (log events by `seq`). */
        const held: Array<LogEvent | LiveFrame> = [];
        let heldBytes = 0;
        /** Resolves when the queue has room again (the backlog waits on it). */
        let roomFor: (() => void) | undefined;

        const stop = (error?: unknown) => {
          if (!open) return;
          open = false;
          cleanup();
          outbox.length = 0;
          held.length = 0;
          roomFor?.();
          try {
            if (error === undefined) controller.close();
            else controller.error(error);
          } catch {
            // already closed
          }
        };
        pump = () => {
          while (open && outbox.length > 0 && (controller.desiredSize ?? 0) > 0) {
            const bytes = outbox.shift()!;
            outboxBytes -= bytes.byteLength;
            controller.enqueue(bytes);
          }
          if (outbox.length === 0 && (controller.desiredSize ?? 0) > 0) {
            const r = roomFor;
            roomFor = undefined;
            r?.();
          }
        };
        const bytesOf = options.frameBytes ?? frameBytesOf;
        const put = (frame: string | Uint8Array) => {
          if (!open) return;
          const bytes = typeof frame === 'string' ? encoder.encode(frame) : frame;
          outbox.push(bytes);
          outboxBytes += bytes.byteLength;
          pump();
          // The queue is full and more waits behind it: this reader is not keeping up.
          if (outboxBytes > bound) stop(new SlowClientError(outboxBytes + bound));
        };
        const hold = (item: LogEvent | LiveFrame, bytes: number) => {
          held.push(item);
          heldBytes += bytes;
          if (heldBytes > bound) stop(new SlowClientError(heldBytes));
        };
        const sendEvent = (e: LogEvent) => {
          if (e.seq <= sent) return;
          sent = e.seq;
          put(bytesOf(e));
        };
        const offFeed = feed.subscribe(
          (e) => (backlogDone ? sendEvent(e) : hold(e, JSON.stringify(e).length)),
          (error) => stop(error),
        );
        const offLive = session.onLive((f) => (backlogDone ? put(bytesOf(f)) : hold(f, JSON.stringify(f).length)));
        const heartbeat = options.heartbeatMs > 0 ? setInterval(() => put(': ping\n\n'), options.heartbeatMs) : undefined;
        const onAbort = () => stop();
        options.signal?.addEventListener('abort', onAbort, { once: true });
        const buffered = () => (open ? Math.max(0, bound - (controller.desiredSize ?? bound)) + outboxBytes + heldBytes : 0);
        options.onOpen?.(buffered);
        cleanup = () => {
          cleanup = () => {};
          options.onClose?.(buffered);
          offFeed();
          offLive();
          if (heartbeat !== undefined) clearInterval(heartbeat);
          options.signal?.removeEventListener('abort', onAbort);
        };
        if (options.signal?.aborted) return stop();

        // Not awaited: the stream calls `pull` (which makes room for the backlog) only once `start` returned.
        void (async () => {
          put(`retry: 1000\n${liveFrame({ type: 'hello', protocol: WIRE_PROTOCOL_VERSION, sessionId: session.id, lastSeq: session.log.lastSeq })}`);
          try {
            // Everything the log holds now, once durable, at the pace the reader takes it.
            await feed.settled();
            const upTo = session.log.lastSeq;
            for (const e of await session.eventsAfter(sent)) {
              while (open && (outbox.length > 0 || (controller.desiredSize ?? 0) <= 0)) await new Promise<void>((resolve) => (roomFor = resolve));
              if (!open) return;
              if (e.seq <= upTo) sendEvent(e);
            }
          } catch (e) {
            return stop(e);
          }
          if (!open) return;
          for (const f of session.liveState()) put(bytesOf(f));
          backlogDone = true;
          for (const item of held.splice(0)) {
            if ('seq' in item) sendEvent(item);
            else put(bytesOf(item));
          }
          heldBytes = 0;
        })();
      },
      pull() {
        pump();
      },
      cancel() {
        cleanup();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: bound }),
  );
}
