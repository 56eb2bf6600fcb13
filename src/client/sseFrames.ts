/**
 * Server-Sent Events read off a fetch body (the WHATWG event-stream format): fetch, not
 * `EventSource`, so a request can carry an `Authorization` header and a `Last-Event-ID` the page
 * chooses. Lines end in CRLF, LF or CR; `data` lines join with LF; comments (`:`) are skipped; a
 * frame is dispatched at its blank line. A frame larger than `maxFrameChars` ends the stream with an
 * error (a server cannot make the page hold unbounded text). Browser-safe.
 */

export interface SseFrame {
  /** `event:` (default `message`). */
  readonly event: string;
  readonly data: string;
  /** `id:`, when the frame set one. */
  readonly id?: string;
  /** `retry:` in ms, when the frame set one. */
  readonly retry?: number;
}

/** Thrown when a server-sent event frame is larger than the limit (the stream is not trusted to send small ones). */
export class SseFrameTooLarge extends Error {
  constructor(max: number) {
    super(`an event-stream frame is larger than ${max} characters`);
    this.name = 'SseFrameTooLarge';
  }
}

/** The frames of `body`, in order, until it ends. */
export async function* sseFrames(body: ReadableStream<Uint8Array>, maxFrameChars = 64 * 1024 * 1024): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let dataChars = 0;
  let id: string | undefined;
  let retry: number | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let at = 0;
      for (;;) {
        const cr = buffer.indexOf('\r', at);
        const lf = buffer.indexOf('\n', at);
        let end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
        if (end === -1) break;
        // A CR at the end of what has arrived may be the first half of a CRLF.
        if (end === cr && end === buffer.length - 1 && !done) break;
        const line = buffer.slice(at, end);
        at = end + (buffer[end] === '\r' && buffer[end + 1] === '\n' ? 2 : 1);
        if (line === '') {
          if (data.length > 0 || event !== '' || id !== undefined || retry !== undefined) {
            yield { event: event || 'message', data: data.join('\n'), ...(id !== undefined ? { id } : {}), ...(retry !== undefined ? { retry } : {}) };
          }
          event = '';
          data = [];
          dataChars = 0;
          id = undefined;
          retry = undefined;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') {
          dataChars += value.length;
          if (dataChars > maxFrameChars) throw new SseFrameTooLarge(maxFrameChars);
          data.push(value);
        } else if (field === 'id' && !value.includes('\0')) id = value;
        else if (field === 'retry' && /^[0-9]+$/.test(value)) retry = Number(value);
      }
      buffer = buffer.slice(at);
      if (buffer.length > maxFrameChars) throw new SseFrameTooLarge(maxFrameChars);
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
