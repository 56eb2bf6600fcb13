/**
 * `createSessionHandler(options)`: the session wire protocol (docs/protocol.md, SPEC §11) as a Fetch
 * API handler, `(request: Request) => Promise<Response>`: it runs in a Next.js route handler, in
 * Hono, in Deno, and in Node's `http` through `toNodeListener` (nodeListener.ts).
 *
 *   GET  {base}/sessions                              the sessions (`list`)
 *   POST {base}/sessions                              a new session (`create`)
 *   GET  {base}/sessions/:id                          one session's summary (`read`)
 *   GET  {base}/sessions/:id/events                   SSE: its log after `Last-Event-ID` / `?after=`, then live (`read`)
 *   POST {base}/sessions/:id/turns        {input}     start a turn (`start`)
 *   POST {base}/sessions/:id/follow-ups   {input}     queue a follow-up (`start`)
 *   POST {base}/sessions/:id/steer        {turnId, message}   (`steer`)
 *   POST {base}/sessions/:id/cancel       {turnId, reason?}   (`cancel`)
 *   POST {base}/sessions/:id/resume       {}                  (`resume`)
 *   POST {base}/sessions/:id/approvals/:approvalId  {answer, reason?}   (`answer`)
 *   POST {base}/sessions/:id/chat                    `useChat`'s request: the AI SDK UI message stream (`read`, then `start` or `answer`)
 *
 * Every request is put to `authorize` first (there is no open default). A POST must be JSON, at
 * most `maxBodyBytes`, and carry an `Idempotency-Key`; a request that carries cookies must come
 * from an allowed Origin (CSRF). Browser-safe: no Node import.
 */
import type * as z from 'zod';
import {
  ApprovalCommandSchema,
  CancelCommandSchema,
  FollowUpCommandSchema,
  ResumeCommandSchema,
  StartTurnCommandSchema,
  SteerCommandSchema,
  WIRE_PROTOCOL_VERSION,
  WIRE_SESSION_ID as ID,
  type CommandResult,
  type SessionSummary,
  type WireAction,
  type WireError,
  type WireErrorCode,
} from '../protocol/wire.js';
import { durableFeed, type DurableFeed } from './durableFeed.js';
import { applyAnswers, ChatRequestSchema, chatIntentOf, turnMessageStream, UI_MESSAGE_STREAM_HEADERS } from './chatEndpoint.js';
import { frameBytesOf, sessionEventStream } from './eventStream.js';
import { CommandRefused, summaryOf, type HostedSession } from './hostedSession.js';
import { idempotencyCache, type IdempotencyCache, type StoredAnswer } from './idempotency.js';

/** Where the handler finds sessions: the app's runtimes, a directory of JSONL logs (`jsonlSessionDirectory`), … */
export interface SessionDirectory {
  /** The sessions a `list` shows. */
  list(): Promise<readonly SessionSummary[]>;
  /** Opens session `id` (the same object on every call while it is open); undefined when there is none. */
  open(id: string): Promise<HostedSession | undefined>;
  /** A new, empty session; returns its id. Absent: `POST …/sessions` is refused (405). */
  create?(): Promise<string>;
}

/**
 * The app's decision on one request: `true` lets it through, `false` refuses it (403),
 * `'unauthenticated'` says it carries no (valid) credentials (401). `sessionId` is undefined for
 * `list` and `create`.
 */
export type Authorize = (request: Request, sessionId: string | undefined, action: WireAction) => boolean | 'unauthenticated' | Promise<boolean | 'unauthenticated'>;

export interface SessionHandlerOptions {
  readonly sessions: SessionDirectory;
  /** Required: every request is authorised by the app (SPEC §11.3). */
  readonly authorize: Authorize;
  /** The path the endpoints live under (default `/api`). */
  readonly basePath?: string;
  /**
   * Origins a request that carries cookies may come from (default: the request's own origin). A
   * cookie-carrying request from any other Origin, or without Origin and `Sec-Fetch-Site:
   * same-origin`, is refused (403): a page elsewhere cannot act with the user's cookies.
   */
  readonly allowedOrigins?: readonly string[];
  /** The largest request body taken (default 64 KiB; more: 413). */
  readonly maxBodyBytes?: number;
  /** Bytes a connection may leave unread before it is dropped (default 1 MiB; it resumes from its `seq`). */
  readonly maxBufferedBytes?: number;
  /** A comment line on idle streams every so often (default 15 s; 0: none). */
  readonly heartbeatMs?: number;
  /** Idempotency keys remembered per session (default 10,000). */
  readonly idempotencyKeys?: number;
  /** The largest `…/chat` request taken (`useChat` sends the whole conversation; default 4 MiB). */
  readonly maxChatBodyBytes?: number;
}

export type SessionHandler = ((request: Request) => Promise<Response>) & {
  /** Event streams open now (pages following a session): for a server's metrics. */
  connections(): number;
  /**
   * Bytes the open streams hold for their pages now (each at most twice `maxBufferedBytes` and a
   * frame before its page is dropped): for a server's metrics.
   */
  bufferedBytes(): number;
  /** Stops the per-session feeds (streams still open end as their requests do). */
  close(): void;
};

const KEY = /^[\x21-\x7e]{1,200}$/;

const HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'dsh-protocol': String(WIRE_PROTOCOL_VERSION) };

const STATUS: Record<WireErrorCode, number> = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  BAD_REQUEST: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PAYLOAD_TOO_LARGE: 413,
  IDEMPOTENCY_KEY_REQUIRED: 428,
  IDEMPOTENCY_KEY_REUSED: 422,
  ALREADY_ANSWERED: 409,
  NOT_WAITING: 409,
  CONFLICT: 409,
  UNAVAILABLE: 503,
};

const json = (status: number, body: unknown, extra: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { ...HEADERS, 'content-type': 'application/json; charset=utf-8', ...extra } });

const refusal = (code: WireErrorCode, message: string, winner?: WireError['winner']): StoredAnswer => ({
  status: STATUS[code],
  body: { error: { code, message }, ...(winner ? { winner } : {}) } satisfies WireError,
});
const fail = (code: WireErrorCode, message: string, extra?: Record<string, string>) => {
  const r = refusal(code, message);
  return json(r.status, r.body, extra);
};

class BodyTooLarge extends Error {}

/** The request body as text, refusing more than `max` bytes without reading them all. */
async function boundedText(request: Request, max: number): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > max) throw new BodyTooLarge();
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLarge();
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(all);
}

type Route =
  | { readonly kind: 'sessions' }
  | { readonly kind: 'session'; readonly id: string }
  | { readonly kind: 'events'; readonly id: string }
  | { readonly kind: 'command'; readonly id: string; readonly command: 'turns' | 'follow-ups' | 'steer' | 'cancel' | 'resume' }
  | { readonly kind: 'approval'; readonly id: string; readonly approvalSeq: number }
  | { readonly kind: 'chat'; readonly id: string };

const COMMAND_ACTION = { turns: 'start', 'follow-ups': 'start', steer: 'steer', cancel: 'cancel', resume: 'resume' } as const;

function route(path: string, base: string): Route | undefined {
  if (!path.startsWith(`${base}/sessions`)) return undefined;
  const parts = path.slice(base.length + 1).split('/');
  if (parts.length === 1) return { kind: 'sessions' };
  const id = decodeURIComponentSafe(parts[1]!);
  if (id === undefined || !ID.test(id)) return undefined;
  if (parts.length === 2) return { kind: 'session', id };
  if (parts.length === 3) {
    const p = parts[2]!;
    if (p === 'events') return { kind: 'events', id };
    if (p === 'turns' || p === 'follow-ups' || p === 'steer' || p === 'cancel' || p === 'resume') return { kind: 'command', id, command: p };
    if (p === 'chat') return { kind: 'chat', id };
    return undefined;
  }
  if (parts.length === 4 && parts[2] === 'approvals' && /^[1-9][0-9]{0,14}$/.test(parts[3]!)) return { kind: 'approval', id, approvalSeq: Number(parts[3]) };
  return undefined;
}

function decodeURIComponentSafe(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/** The `seq` a page resumes after: `Last-Event-ID`, else `?after=`, else 0. Undefined when malformed. */
function resumePoint(request: Request, url: URL): number | undefined {
  const given = request.headers.get('last-event-id') ?? url.searchParams.get('after') ?? '0';
  return /^(0|[1-9][0-9]{0,14})$/.test(given) ? Number(given) : undefined;
}

/**
 * The session wire protocol (docs/protocol.md) as a Fetch API handler: lists, creates and serves
 * the sessions of `options.sessions`, asking `options.authorize` about every request.
 *
 * @example
 * ```ts
 * const handler = createSessionHandler({
 *   sessions: memorySessionDirectory({ host: (id) => hostRuntime({ id, runtime: createRuntime({ tools }), turnOptions: () => ({ model }) }) }),
 *   authorize: (request) => (request.headers.get('authorization') === `Bearer ${token}` ? true : 'unauthenticated'),
 * });
 * createServer(toNodeListener(handler)).listen(8080);
 * ```
 */
export function createSessionHandler(options: SessionHandlerOptions): SessionHandler {
  if (typeof options.authorize !== 'function') throw new TypeError('createSessionHandler: `authorize` is required (there is no open default)');
  const base = (options.basePath ?? '/api').replace(/\/+$/, '');
  const maxBody = options.maxBodyBytes ?? 64 * 1024;
  const maxBuffered = options.maxBufferedBytes ?? 1024 * 1024;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const maxChatBody = options.maxChatBodyBytes ?? 4 * 1024 * 1024;
  const feeds = new Map<HostedSession, DurableFeed>();
  /** The open event streams, each as the probe of the bytes it holds. */
  const streams = new Set<() => number>();
  /** Each event's and live frame's SSE bytes, made once for all the connections that send it. */
  const frames = new WeakMap<object, Uint8Array>();
  const frameBytes = (item: Parameters<typeof frameBytesOf>[0]) => {
    let bytes = frames.get(item);
    if (!bytes) frames.set(item, (bytes = frameBytesOf(item)));
    return bytes;
  };
  const keys = new Map<string, IdempotencyCache>();

  const feedOf = (s: HostedSession) => {
    let f = feeds.get(s);
    if (!f) feeds.set(s, (f = durableFeed(s)));
    return f;
  };
  const keysOf = (id: string) => {
    let k = keys.get(id);
    if (!k) keys.set(id, (k = idempotencyCache(options.idempotencyKeys)));
    return k;
  };

  /** Cookies ride along on cross-site requests: one that carries them must come from an allowed origin. */
  const originOk = (request: Request, url: URL): boolean => {
    if (!request.headers.has('cookie')) return true;
    const origin = request.headers.get('origin');
    if (origin === null) return request.method === 'GET' || request.headers.get('sec-fetch-site') === 'same-origin';
    return (options.allowedOrigins ?? [url.origin]).includes(origin);
  };

  const authorized = async (request: Request, id: string | undefined, action: WireAction): Promise<Response | undefined> => {
    let verdict: boolean | 'unauthenticated';
    try {
      verdict = await options.authorize(request, id, action);
    } catch {
      return fail('FORBIDDEN', 'authorisation failed');
    }
    if (verdict === 'unauthenticated') return fail('UNAUTHORIZED', 'credentials required', { 'www-authenticate': 'Bearer' });
    if (verdict !== true) return fail('FORBIDDEN', `not allowed to ${action}${id !== undefined ? ` session ${id}` : ''}`);
    return undefined;
  };



  /** Runs one command of session `s` (its body already parsed). */
  const run = async (s: HostedSession, r: Extract<Route, { kind: 'command' | 'approval' }>, body: unknown): Promise<StoredAnswer> => {
    const parsed = <T>(schema: z.ZodType<T>): T => {
      const p = schema.safeParse(body);
      if (!p.success) throw new CommandRefused('BAD_REQUEST', p.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
      return p.data;
    };
    try {
      let result: CommandResult;
      if (r.kind === 'approval') {
        await s.answer(r.approvalSeq, parsed(ApprovalCommandSchema));
        result = { ok: true };
      } else if (r.command === 'turns') result = { ok: true, ...(await s.startTurn(parsed(StartTurnCommandSchema).input)) };
      else if (r.command === 'follow-ups') result = { ok: true, ...(await s.followUp(parsed(FollowUpCommandSchema).input)) };
      else if (r.command === 'resume') {
        parsed(ResumeCommandSchema);
        result = { ok: true, ...(await s.resume()) };
      } else if (r.command === 'cancel') {
        const c = parsed(CancelCommandSchema);
        await s.cancel(c.turnId, c.reason);
        result = { ok: true };
      } else {
        const c = parsed(SteerCommandSchema);
        const o = await s.steer(c.turnId, c.message);
        result = o.delivered === 'steer' ? { ok: true, delivered: 'steer', stepIndex: o.stepIndex, seq: o.seq } : { ok: true, delivered: 'follow-up', turnId: o.turn.turnId };
      }
      return { status: 200, body: result };
    } catch (e) {
      if (e instanceof CommandRefused) return refusal(e.code, e.message, e.winner);
      return refusal('CONFLICT', e instanceof Error ? e.message : String(e));
    }
  };

  /** `POST …/chat`: the AI SDK's UI message stream for `useChat` (chatEndpoint.ts). */
  const chat = async (request: Request, id: string): Promise<Response> => {
    if (!/^application\/json\s*(;|$)/i.test(request.headers.get('content-type') ?? '')) return fail('UNSUPPORTED_MEDIA_TYPE', 'send JSON (content-type: application/json)');
    let body: unknown;
    try {
      body = JSON.parse(await boundedText(request, maxChatBody));
    } catch (e) {
      if (e instanceof BodyTooLarge) return fail('PAYLOAD_TOO_LARGE', `a chat request is at most ${maxChatBody} bytes`, { connection: 'close' });
      return fail('BAD_REQUEST', 'the body is not JSON');
    }
    const parsed = ChatRequestSchema.safeParse(body);
    if (!parsed.success) return fail('BAD_REQUEST', 'expected a useChat request: { messages: [{ id, role, parts }] }');
    const intent = chatIntentOf(parsed.data);
    if (intent.kind === 'invalid') return fail('BAD_REQUEST', intent.message);
    const refused = await authorized(request, id, intent.kind === 'start' ? 'start' : 'answer');
    if (refused) return refused;
    const session = await options.sessions.open(id);
    if (!session) return fail('NOT_FOUND', `no session ${id}`);
    let turnId: string;
    let after: number;
    if (intent.kind === 'start') {
      // Once per user message: a retried request streams the turn its first one started.
      const a = await keysOf(id).once(`chat:${intent.messageId}`, `chat ${intent.input}`, async () => {
        const before = session.log.lastSeq;
        try {
          return { status: 200, body: { turnId: (await session.startTurn(intent.input)).turnId, after: before } };
        } catch (e) {
          return e instanceof CommandRefused ? refusal(e.code, e.message) : refusal('CONFLICT', String(e));
        }
      });
      if (!a) return fail('IDEMPOTENCY_KEY_REUSED', 'this message id was sent with another text');
      if (a.status !== 200) return json(a.status, a.body);
      ({ turnId, after } = a.body as { turnId: string; after: number });
    } else {
      await applyAnswers(session, intent.answers);
      ({ turnId, after } = intent);
    }
    const stream = turnMessageStream({ session, feed: feedOf(session), turnId, after, maxBufferedBytes: maxBuffered, signal: request.signal });
    return new Response(stream, { status: 200, headers: { ...HEADERS, ...UI_MESSAGE_STREAM_HEADERS } });
  };

  const handle = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const r = route(url.pathname, base);
    if (!r) return fail('NOT_FOUND', 'no such endpoint');
    const isGet = request.method === 'GET' || request.method === 'HEAD';
    if (!isGet && request.method !== 'POST') return fail('METHOD_NOT_ALLOWED', `${request.method} is not served here`, { allow: 'GET, POST' });
    const wantsGet = r.kind === 'session' || r.kind === 'events';
    if (r.kind !== 'sessions' && wantsGet !== isGet) return fail('METHOD_NOT_ALLOWED', `use ${wantsGet ? 'GET' : 'POST'}`, { allow: wantsGet ? 'GET' : 'POST' });
    if (!originOk(request, url)) return fail('FORBIDDEN', 'cross-origin request with cookies refused');

    const id = r.kind === 'sessions' ? undefined : r.id;
    // A chat request is read first as `read`; what it then does (start, answer) is authorised too.
    const action: WireAction =
      r.kind === 'sessions' ? (isGet ? 'list' : 'create') : r.kind === 'approval' ? 'answer' : r.kind === 'command' ? COMMAND_ACTION[r.command] : 'read';
    const refused = await authorized(request, id, action);
    if (refused) return refused;
    if (r.kind === 'chat') return chat(request, r.id);

    if (r.kind === 'sessions' && isGet) return json(200, { sessions: await options.sessions.list() });

    // Every POST: JSON, bounded, with an idempotency key.
    let body: unknown;
    let key = '';
    if (!isGet) {
      if (!/^application\/json\s*(;|$)/i.test(request.headers.get('content-type') ?? '')) return fail('UNSUPPORTED_MEDIA_TYPE', 'send JSON (content-type: application/json)');
      key = request.headers.get('idempotency-key') ?? '';
      if (!KEY.test(key)) return fail('IDEMPOTENCY_KEY_REQUIRED', 'an Idempotency-Key header (1 to 200 visible ASCII characters) is required');
      let text: string;
      try {
        text = await boundedText(request, maxBody);
      } catch (e) {
        if (e instanceof BodyTooLarge) return fail('PAYLOAD_TOO_LARGE', `a request body is at most ${maxBody} bytes`, { connection: 'close' });
        return fail('BAD_REQUEST', 'the body is not UTF-8 text');
      }
      try {
        body = text === '' ? {} : JSON.parse(text);
      } catch {
        return fail('BAD_REQUEST', 'the body is not JSON');
      }
    }

    if (r.kind === 'sessions') {
      if (!options.sessions.create) return fail('METHOD_NOT_ALLOWED', 'this server does not create sessions', { allow: 'GET' });
      const create = options.sessions.create.bind(options.sessions);
      const a = await keysOf('').once(key, `create ${JSON.stringify(body)}`, async () => {
        try {
          return { status: 201, body: { id: await create() } };
        } catch (e) {
          return refusal('UNAVAILABLE', e instanceof Error ? e.message : String(e));
        }
      });
      return a ? json(a.status, a.body) : fail('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for another request');
    }

    const session = await options.sessions.open(r.id);
    if (!session) return fail('NOT_FOUND', `no session ${r.id}`);
    if (r.kind === 'session') return json(200, summaryOf(session));
    if (r.kind === 'events') {
      const after = resumePoint(request, url);
      if (after === undefined) return fail('BAD_REQUEST', 'Last-Event-ID / after must be a seq (a non-negative integer)');
      const headers = { ...HEADERS, 'content-type': 'text/event-stream; charset=utf-8', 'x-accel-buffering': 'no' };
      if (request.method === 'HEAD') return new Response(null, { status: 200, headers });
      const stream = sessionEventStream({
        session,
        feed: feedOf(session),
        after,
        maxBufferedBytes: maxBuffered,
        heartbeatMs,
        signal: request.signal,
        frameBytes,
        onOpen: (probe) => void streams.add(probe),
        onClose: (probe) => void streams.delete(probe),
      });
      return new Response(stream, { status: 200, headers });
    }
    const fingerprint = `${url.pathname} ${JSON.stringify(body)}`;
    const a = await keysOf(r.id).once(key, fingerprint, () => run(session, r, body));
    return a ? json(a.status, a.body) : fail('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for another command');
  };

  return Object.assign(
    async (request: Request): Promise<Response> => {
      try {
        return await handle(request);
      } catch (e) {
        return fail('UNAVAILABLE', e instanceof Error ? e.message : String(e));
      }
    },
    {
      connections: () => streams.size,
      bufferedBytes: () => [...streams].reduce((sum, probe) => sum + probe(), 0),
      close() {
        for (const f of feeds.values()) f.close();
        feeds.clear();
      },
    },
  );
}
