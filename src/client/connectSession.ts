/**
 * `connectSession(url, options)`: a session a server serves over the wire protocol
 * (docs/protocol.md), as a page sees it. It is a session view (the same `SessionState` projection a
 * local `createSessionView` keeps, fed by the log events and live frames the server sends), so every
 * `dsh/react` hook takes it as it takes a local view; and it has the session's controls, each a POST
 * with an `Idempotency-Key` (a retry after a network failure takes effect once). The stream
 * reconnects with backoff and resumes after the last `seq` it applied: nothing is applied twice and
 * nothing is skipped. Browser-safe: fetch, streams, timers.
 */
import { LogEventSchema, type LogEvent } from '../protocol/index.js';
import {
  CommandResultSchema,
  LIVE_FRAME,
  LOG_FRAME,
  LiveFrameSchema,
  WireErrorSchema,
  type CommandResult,
  type LiveFrame,
  type WinningAnswer,
  type WireAnswer,
  type WireErrorCode,
} from '../protocol/wire.js';
import { CALL_STAGE_NAMES, type CallStageName } from '../runtime/inspection/stageEvents.js';
import { callKey, SessionState } from '../view/sessionState.js';
import type { SessionSnapshot } from '../view/viewTypes.js';
import { snapshotListeners } from '../view/snapshotListeners.js';
import { sseFrames } from './sseFrames.js';

export interface ConnectSessionOptions {
  /** Headers of every request (e.g. `Authorization: Bearer …`); a function is read for each request. */
  readonly headers?: Record<string, string> | (() => Record<string, string>);
  /** `fetch`'s credentials mode (cookies): default `same-origin`. */
  readonly credentials?: RequestCredentials;
  /** Another `fetch` (tests, a proxy). */
  readonly fetch?: typeof fetch;
  /** Reconnect backoff: the first wait and the longest (ms; default 250 and 10,000). */
  readonly backoff?: { readonly initialMs?: number; readonly maxMs?: number };
  /** Attempts of a command whose request failed on the network (default 4), each with the same key. */
  readonly commandAttempts?: number;
}

/** Where the connection stands. `closed`: `close()` was called, or the server refused the stream (`error` says why). */
export interface ConnectionStatus {
  readonly state: 'connecting' | 'open' | 'retrying' | 'closed';
  /** Failed attempts in a row. */
  readonly retries: number;
  readonly error?: string;
}

/** A command the server refused: its stable code, and for an approval answered elsewhere, the winning answer. */
export class SessionCommandError extends Error {
  constructor(
    readonly status: number,
    readonly code: WireErrorCode | 'NETWORK',
    message: string,
    readonly winner?: WinningAnswer,
  ) {
    super(message);
    this.name = 'SessionCommandError';
  }
}

export interface RemoteSession {
  /** Calls `listener` after the snapshot changed (once per burst of changes). */
  subscribe(listener: () => void): () => void;
  /** The current snapshot: frozen, the same object until something changes. */
  getSnapshot(): SessionSnapshot;
  /** Where the stream stands; `onStatus` hears each change. */
  status(): ConnectionStatus;
  /** Hears each change of the connection's status; returns the remover. */
  onStatus(listener: (status: ConnectionStatus) => void): () => void;
  /** Starts a turn (queued behind the running one); resolves with its id once the server took it. */
  startTurn(input: string): Promise<{ turnId: string }>;
  /** Queues a follow-up of the latest turn. */
  followUp(input: string): Promise<{ turnId: string }>;
  /** Continues the suspended turn: its questions are asked again. */
  resume(): Promise<{ turnId: string }>;
  /** Steers a running turn (it shows as `waiting` until delivered, or it becomes a follow-up turn). */
  steer(turnId: string, message: string): Promise<Extract<CommandResult, { delivered: unknown }>>;
  /** Cancels a turn; false when the view knows no such turn. */
  cancel(turnId: string, reason?: string): boolean;
  /**
   * Answers approval `approvalId` (a `SessionApproval.id`): resolves `{ ok: true }`, or rejects with
   * a `SessionCommandError` (`ALREADY_ANSWERED` carries the winning answer).
   */
  answer(approvalId: string, answer: WireAnswer, reason?: string): Promise<{ ok: true }>;
  /** Allows the call once or always; false when the view shows no answerable question by that id. */
  approve(approvalId: string, scope?: 'once' | 'always'): boolean;
  /** Denies the call with the person's reason; false when there is no answerable question by that id. */
  deny(approvalId: string, reason?: string): boolean;
  /** Decides later (the turn suspends); false when there is no answerable question by that id. */
  suspend(approvalId: string): boolean;
  /** Stops the stream; commands in flight finish. */
  close(): void;
}

const isStage = (s: string): s is CallStageName => (CALL_STAGE_NAMES as readonly string[]).includes(s);

function randomKey(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * Connects to the session at `url` (its base, e.g. `https://app.example/api/sessions/abc`).
 *
 * @example
 * ```tsx
 * const session = connectSession('/api/sessions/abc', { headers: { authorization: `Bearer ${token}` } });
 * root.render(<SessionProvider view={session}><App /></SessionProvider>);
 * await session.startTurn('read a.txt');
 * ```
 */
export function connectSession(url: string | URL, options: ConnectSessionOptions = {}): RemoteSession {
  const base = String(url).replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const headers = () => (typeof options.headers === 'function' ? options.headers() : (options.headers ?? {}));
  const credentials = options.credentials ?? 'same-origin';
  const initialMs = options.backoff?.initialMs ?? 250;
  const maxMs = options.backoff?.maxMs ?? 10_000;

  let answerable = new Set<string>();
  let state = new SessionState((a) => answerable.has(callKey(a.turnId, a.stepIndex, a.callId)));
  const listeners = snapshotListeners(() => state.snapshot());
  const statusListeners = new Set<(s: ConnectionStatus) => void>();
  let status: ConnectionStatus = { state: 'connecting', retries: 0 };
  const setStatus = (s: ConnectionStatus) => {
    status = s;
    for (const l of [...statusListeners]) {
      try {
        l(s);
      } catch {
        // A listener cannot break the connection.
      }
    }
  };
  const stop = new AbortController();

  const applyLive = (f: LiveFrame) => {
    switch (f.type) {
      case 'hello':
      case 'actor':
      case 'session':
        return;
      case 'delta':
        return state.applyDelta(f.turnId, f.delta);
      case 'stage':
        if (isStage(f.stage)) state.applyStage({ type: f.event === 'entered' ? 'stage/entered' : 'stage/exited', turnId: f.turnId, stepIndex: f.stepIndex, callId: f.callId, stage: f.stage });
        return;
      case 'turn':
        if (f.state === 'queued') state.queueTurn(f.turnId, f.input ?? '', f.followUp);
        else state.setTurnState(f.turnId, f.state);
        return;
      case 'answerable':
        answerable = new Set(f.calls.map((c) => callKey(c.turnId, c.stepIndex, c.callId)));
        return state.setAnswerable((a) => answerable.has(callKey(a.turnId, a.stepIndex, a.callId)));
    }
  };

  /** Reads one connection until it ends; returns why it ended. */
  const follow = async (): Promise<'ended' | 'refused' | 'reset'> => {
    const after = state.snapshot().lastSeq;
    const response = await doFetch(`${base}/events`, {
      headers: { ...headers(), accept: 'text/event-stream', ...(after > 0 ? { 'last-event-id': String(after) } : {}) },
      credentials,
      cache: 'no-store',
      signal: stop.signal,
    });
    if (!response.ok || !response.body) {
      const text = await response.text().catch(() => '');
      const parsed = WireErrorSchema.safeParse(safeJson(text));
      const message = parsed.success ? parsed.data.error.message : `HTTP ${response.status}`;
      // Refusals do not go away by retrying (credentials, authorisation, no such session).
      if (response.status === 401 || response.status === 403 || response.status === 404 || response.status === 400) {
        setStatus({ state: 'closed', retries: status.retries, error: message });
        return 'refused';
      }
      throw new Error(message);
    }
    for await (const frame of sseFrames(response.body)) {
      if (frame.event === LOG_FRAME) {
        const event = LogEventSchema.safeParse(safeJson(frame.data));
        if (!event.success) throw new Error('the server sent a log event that does not check out');
        const e: LogEvent = event.data;
        const last = state.snapshot().lastSeq;
        if (e.seq <= last) continue;
        // Nothing skipped: after the first event, each is the next one (else: reconnect and ask again).
        if (last > 0 && e.seq !== last + 1) throw new Error(`the stream skipped from seq ${last} to ${e.seq}`);
        state.applyEvent(e);
        listeners.changed();
      } else if (frame.event === LIVE_FRAME) {
        const f = LiveFrameSchema.safeParse(safeJson(frame.data));
        if (!f.success) continue; // a frame of a later protocol: live-only, nothing lost
        if (f.data.type === 'hello') {
          if (status.state !== 'open') setStatus({ state: 'open', retries: 0 });
          // The server has less than this page applied: not the history this page saw. Start over.
          if (f.data.lastSeq < state.snapshot().lastSeq) return 'reset';
        }
        applyLive(f.data);
        listeners.changed();
      }
    }
    return 'ended';
  };

  void (async () => {
    let wait = initialMs;
    while (!stop.signal.aborted) {
      let why: 'ended' | 'refused' | 'reset' | 'failed';
      let error: string | undefined;
      try {
        why = await follow();
      } catch (e) {
        why = 'failed';
        error = e instanceof Error ? e.message : String(e);
      }
      if (stop.signal.aborted || why === 'refused') return;
      if (why === 'reset') {
        answerable = new Set();
        state = new SessionState((a) => answerable.has(callKey(a.turnId, a.stepIndex, a.callId)));
        listeners.changed();
        continue;
      }
      if (status.state === 'open') wait = initialMs;
      setStatus({ state: 'retrying', retries: status.retries + 1, ...(error !== undefined ? { error } : {}) });
      // Full jitter: many pages cut off at once do not come back at once.
      await sleep(Math.random() * wait, stop.signal);
      wait = Math.min(maxMs, wait * 2);
    }
  })();

  /** Sends one command; a network failure is retried with the same key (the server runs it once). */
  const command = async (path: string, body: unknown): Promise<unknown> => {
    const key = randomKey();
    const attempts = Math.max(1, options.commandAttempts ?? 4);
    let lastError: unknown;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) await sleep(Math.min(maxMs, initialMs * 2 ** attempt) * Math.random(), new AbortController().signal);
      let response: Response;
      try {
        response = await doFetch(`${base}/${path}`, {
          method: 'POST',
          headers: { ...headers(), 'content-type': 'application/json', 'idempotency-key': key },
          credentials,
          body: JSON.stringify(body),
        });
      } catch (e) {
        lastError = e;
        continue;
      }
      const parsed = safeJson(await response.text());
      if (response.ok) return parsed;
      if (response.status === 502 || response.status === 503 || response.status === 504) {
        lastError = new SessionCommandError(response.status, 'UNAVAILABLE', `HTTP ${response.status}`);
        continue;
      }
      const err = WireErrorSchema.safeParse(parsed);
      throw err.success
        ? new SessionCommandError(response.status, err.data.error.code, err.data.error.message, err.data.winner)
        : new SessionCommandError(response.status, 'BAD_REQUEST', `HTTP ${response.status}`);
    }
    throw lastError instanceof SessionCommandError ? lastError : new SessionCommandError(0, 'NETWORK', lastError instanceof Error ? lastError.message : String(lastError));
  };
  const result = async (path: string, body: unknown): Promise<CommandResult> => {
    const r = CommandResultSchema.safeParse(await command(path, body));
    if (!r.success) throw new SessionCommandError(0, 'BAD_REQUEST', 'the server answered a command with something else than a command result');
    return r.data;
  };
  const turnOf = async (path: string, body: unknown, input?: string): Promise<{ turnId: string }> => {
    const r = await result(path, body);
    if (!('turnId' in r)) throw new SessionCommandError(0, 'BAD_REQUEST', 'the server answered without a turn id');
    if (input !== undefined) {
      state.queueTurn(r.turnId, input);
      listeners.changed();
    }
    return { turnId: r.turnId };
  };

  const approvalOf = (id: string) => state.snapshot().approvals.find((a) => a.id === id && a.answerable);
  const answer = async (approvalId: string, given: WireAnswer, reason?: string): Promise<{ ok: true }> => {
    const a = state.snapshot().approvals.find((x) => x.id === approvalId);
    if (!a) throw new SessionCommandError(0, 'NOT_FOUND', `no approval ${approvalId} in this view`);
    await command(`approvals/${a.seq}`, { answer: given, ...(given === 'deny' && reason !== undefined && reason.trim() !== '' ? { reason } : {}) });
    return { ok: true };
  };
  const fire = (id: string, given: WireAnswer, reason?: string): boolean => {
    if (!approvalOf(id)) return false;
    // The outcome shows in the log (the answer, or another client's); a refusal changes nothing here.
    answer(id, given, reason).catch(() => undefined);
    return true;
  };

  return {
    subscribe: listeners.subscribe,
    getSnapshot: () => state.snapshot(),
    status: () => status,
    onStatus(listener) {
      statusListeners.add(listener);
      return () => void statusListeners.delete(listener);
    },
    startTurn: (input) => turnOf('turns', { input }, input),
    followUp: (input) => turnOf('follow-ups', { input }, input),
    resume: () => turnOf('resume', {}),
    async steer(turnId, message) {
      const at = state.steerSent(turnId, message);
      listeners.changed();
      const r = await result('steer', { turnId, message });
      if (!('delivered' in r)) throw new SessionCommandError(0, 'BAD_REQUEST', 'the server answered a steer without where it went');
      if (r.delivered === 'follow-up') {
        state.queueTurn(r.turnId, message, { kind: 'late-steer', after: turnId });
        state.steerBecameTurn(turnId, at, r.turnId);
        listeners.changed();
      }
      return r;
    },
    cancel(turnId, reason) {
      if (!state.snapshot().turns.some((t) => t.turnId === turnId && t.state !== 'ended')) return false;
      state.setTurnState(turnId, 'cancelling');
      listeners.changed();
      command('cancel', { turnId, ...(reason !== undefined ? { reason } : {}) }).catch(() => undefined);
      return true;
    },
    answer,
    approve: (id, scope = 'once') => fire(id, scope === 'always' ? 'allow-always' : 'allow-once'),
    deny: (id, reason) => fire(id, 'deny', reason),
    suspend: (id) => fire(id, 'suspend'),
    close() {
      stop.abort();
      setStatus({ state: 'closed', retries: status.retries });
      listeners.clear();
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
