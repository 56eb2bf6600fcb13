/**
 * Model-request failures (SPEC §5, last point): what kind of failure it was, and what to do next.
 * A retry always needs a reason to expect a different outcome: time passing for transport errors
 * (bounded), a persistent, measured reduction of the prompt for context overflow. Nothing retries
 * in place forever.
 */
import { describeThrown, type RequestErrorKind } from '../protocol/index.js';

/** A classified model-request failure. */
export interface RequestErrorInfo {
  kind: RequestErrorKind;
  /** HTTP status, when the error carried one. */
  status?: number;
  message: string;
  /** How long the server asked us to wait (`retry-after-ms` / `retry-after`), when it said. */
  retryAfterMs?: number;
}

const OVERFLOW_TEXT = /context_length_exceeded|prompt is too long|maximum context length/i;
const RETRYABLE_STATUS = (s: number) => s === 408 || s === 409 || s === 429 || s >= 500;
// Transport failures that never produced an HTTP status (what `fetch` rejects with on Node).
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);
// Error types a provider sends inside a stream that already answered HTTP 200 (Anthropic's
// `event: error`, OpenAI's `{"error": …}` chunk): no status, so the type is the evidence.
const RETRYABLE_TYPES = new Set(['overloaded_error', 'api_error', 'rate_limit_error', 'server_error', 'timeout_error']);

interface ErrorFacts {
  names: string[];
  codes: string[];
  types: string[];
  /** Every distinct message down the cause chain, outermost first. */
  messages: string[];
  texts: string[];
  status: number | undefined;
  isRetryable: boolean | undefined;
  headers: Record<string, string> | undefined;
  message: string | undefined;
}

// Providers and wrappers nest the useful error: `cause` (fetch, APICallError), `lastError` (the AI
// SDK's RetryError). Walk a few levels and keep the first status/header/flag found.
function collectFacts(error: unknown): ErrorFacts {
  const facts: ErrorFacts = { names: [], codes: [], types: [], messages: [], texts: [], status: undefined, isRetryable: undefined, headers: undefined, message: undefined };
  try {
    walkFacts(error, facts);
  } catch {
    // A hostile error (a throwing getter, a revoked Proxy): keep what was found, describe the rest.
    facts.message ??= describeThrown(error);
  }
  return facts;
}

function walkFacts(error: unknown, facts: ErrorFacts): void {
  const seen = new Set<unknown>();
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null && !seen.has(current); depth++) {
    seen.add(current);
    if (typeof current !== 'object') {
      facts.texts.push(describeThrown(current));
      facts.message ??= describeThrown(current);
      break;
    }
    const e = current as Record<string, unknown>;
    if (typeof e.name === 'string') facts.names.push(e.name);
    if (typeof e.code === 'string') facts.codes.push(e.code);
    if (typeof e.type === 'string') facts.types.push(e.type);
    if (typeof e.message === 'string') {
      facts.texts.push(e.message);
      facts.message ??= e.message;
      if (e.message && !facts.messages.includes(e.message)) facts.messages.push(e.message);
    }
    if (typeof e.responseBody === 'string') facts.texts.push(e.responseBody);
    if (e.data !== undefined) facts.texts.push(safeJson(e.data));
    if (e.error !== undefined && typeof e.error === 'object') facts.texts.push(safeJson(e.error));
    const status = typeof e.statusCode === 'number' ? e.statusCode : typeof e.status === 'number' ? e.status : undefined;
    facts.status ??= status;
    if (typeof e.isRetryable === 'boolean') facts.isRetryable ??= e.isRetryable;
    if (e.responseHeaders && typeof e.responseHeaders === 'object') facts.headers ??= e.responseHeaders as Record<string, string>;
    // `{ type: 'error', error: { type, message } }`: the provider's error body as a value.
    current = e.cause ?? e.lastError ?? (typeof e.error === 'object' && e.error !== null && facts.types.length && !e.message ? e.error : undefined);
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** Milliseconds from `retry-after-ms` or `retry-after` (seconds, or an HTTP date when `now` is known). */
function retryAfterOf(headers: Record<string, string> | undefined, now: number | undefined): number | undefined {
  if (!headers) return undefined;
  const get = (name: string) => Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  const ms = Number.parseFloat(get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = get('retry-after');
  if (raw === undefined) return undefined;
  const seconds = Number(raw.trim());
  if (raw.trim() !== '' && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  if (now !== undefined && Number.isFinite(date)) return Math.max(0, date - now);
  return undefined;
}

/**
 * Classifies a failed model request: `context-overflow` (400/413 saying the prompt is too long),
 * `retryable` (408/409/429/5xx, `isRetryable`, network resets), `aborted` (the caller cancelled),
 * else `fatal`. Pass the request's signal so a cancel is recognised whatever the provider threw;
 * pass `now` (the injected clock's time) to honour a `Retry-After` given as an HTTP date.
 */
export function classifyRequestError(error: unknown, options: { signal?: AbortSignal; now?: number } = {}): RequestErrorInfo {
  const facts = collectFacts(error);
  const base = {
    message: describeFacts(facts) ?? (safeJson(error) || describeThrown(error)),
    ...(facts.status !== undefined ? { status: facts.status } : {}),
  };
  if (options.signal?.aborted || facts.names.includes('AbortError')) return { kind: 'aborted', ...base };

  const overflowText = facts.texts.some((t) => OVERFLOW_TEXT.test(t));
  // No status at all: an error part inside the stream, whose text is the only evidence.
  if (overflowText && (facts.status === 400 || facts.status === 413 || facts.status === undefined)) return { kind: 'context-overflow', ...base };

  const retryable =
    (facts.status !== undefined && RETRYABLE_STATUS(facts.status)) ||
    facts.isRetryable === true ||
    facts.names.includes('TimeoutError') ||
    facts.codes.some((c) => NETWORK_CODES.has(c)) ||
    facts.types.some((t) => RETRYABLE_TYPES.has(t));
  if (retryable) {
    const retryAfterMs = retryAfterOf(facts.headers, options.now);
    return { kind: 'retryable', ...base, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  if (facts.status === 404 || facts.texts.some((t) => /model_not_found|not_found_error/.test(t))) {
    return { kind: 'fatal', ...base, message: `model not found: ${base.message} (check the model name given to --model)` };
  }
  return { kind: 'fatal', ...base };
}

/**
 * The whole cause chain in one line, so the real cause is not hidden behind a wrapper's message:
 * "Failed to process successful response: terminated: other side closed (UND_ERR_SOCKET)".
 */
function describeFacts(facts: ErrorFacts): string | undefined {
  if (!facts.messages.length && !facts.types.length) return facts.message;
  const chain = facts.messages.join(': ');
  const tags = [...new Set([...facts.types, ...facts.codes])].filter((t) => !chain.includes(t));
  const text = tags.length ? `${chain}${chain ? ' ' : ''}(${tags.join(', ')})` : chain;
  return text.replace(/\s*[\r\n]+\s*/g, ' ').slice(0, 2000);
}

/** What the step knows when it asks the policy. */
export interface RetryPolicyInput {
  kind: RequestErrorKind;
  /** 1-based number of the request that just failed (as in `agent/request-error.attempt`). */
  attempt: number;
  /** Compactions already performed for this step. */
  compactionsTried: number;
  /**
   * For context overflow only, the outcome of the compaction just performed for this error:
   * `undefined` = not compacted yet (ask again after compacting), `true` = the projected prompt
   * shrank, `false` = it did not.
   */
  shrank?: boolean;
  /** Server-requested wait from `classifyRequestError`. */
  retryAfterMs?: number;
}

/** The policy's answer. */
export type RetryDecision = { action: 'retry'; delayMs: number } | { action: 'compact' } | { action: 'give-up'; reason: string };

/** Options of the default retry policy for failed model requests. */
export interface RequestRetryPolicyOptions {
  /** Retries for transport failures (`retryable`). Default 3. */
  maxRetries?: number;
  /** First backoff delay; doubles per retry. Default 1000 ms. */
  baseDelayMs?: number;
  /** Backoff cap. Default 30 000 ms. */
  maxDelayMs?: number;
  /** Compactions per step for context overflow. Default 2. */
  maxCompactions?: number;
  /** A `Retry-After` longer than this gives up instead of waiting. Default 60 000 ms. */
  maxRetryAfterMs?: number;
}

/** Decides retry / compact / give-up for each failed model request. */
export interface RequestRetryPolicy {
  /** Retry after a delay, compact the context first, or give up, for one failed request. */
  decide(input: RetryPolicyInput): RetryDecision;
  /**
   * Upper bound on model requests per step under this policy (first try included). The step machine
   * enforces it, and never goes beyond `MAX_REQUEST_ATTEMPTS` (16) whatever `decide` answers.
   */
  readonly maxAttempts: number;
}

/**
 * The default policy. Context overflow is answered in two questions: first `compact`; then, asked
 * again with `shrank`, `retry` only if the compaction shrank the prompt, else `give-up`. It never
 * retries an overflow in place. Transport errors retry with deterministic exponential backoff (or
 * the server's `Retry-After`). Every path is bounded by `maxAttempts`.
 */
export function createRequestRetryPolicy(options: RequestRetryPolicyOptions = {}): RequestRetryPolicy {
  const maxRetries = Math.max(0, Math.floor(options.maxRetries ?? 3));
  const baseDelayMs = Math.max(0, options.baseDelayMs ?? 1000);
  const maxDelayMs = Math.max(0, options.maxDelayMs ?? 30_000);
  const maxCompactions = Math.max(0, Math.floor(options.maxCompactions ?? 2));
  const maxRetryAfterMs = Math.max(0, options.maxRetryAfterMs ?? 60_000);
  // Each retry is paid for by either a transport-retry budget unit or a (shrinking) compaction.
  const maxAttempts = 1 + maxRetries + maxCompactions;

  return {
    maxAttempts,
    decide(input) {
      const attempt = Math.max(1, Math.floor(input.attempt));
      const compactionsTried = Math.max(0, Math.floor(input.compactionsTried));
      if (input.kind === 'aborted') return { action: 'give-up', reason: 'the request was aborted' };
      if (input.kind === 'fatal') return { action: 'give-up', reason: 'the error is not retryable' };
      // The hard bound: no request beyond maxAttempts, whatever the caller reports.
      if (attempt >= maxAttempts) {
        return { action: 'give-up', reason: `gave up after ${attempt} attempt(s)` };
      }

      if (input.kind === 'context-overflow') {
        if (input.shrank === undefined) {
          if (compactionsTried >= maxCompactions) {
            return { action: 'give-up', reason: `context still too long after ${compactionsTried} compaction(s)` };
          }
          return { action: 'compact' };
        }
        if (!input.shrank) return { action: 'give-up', reason: 'context too long and compaction could not shrink the prompt' };
        if (compactionsTried > maxCompactions) return { action: 'give-up', reason: `context still too long after ${compactionsTried} compaction(s)` };
        return { action: 'retry', delayMs: 0 };
      }

      // Overflow retries each follow one compaction, so the transport retries so far are the rest.
      const transportRetries = Math.max(0, attempt - 1 - compactionsTried);
      if (transportRetries >= maxRetries) return { action: 'give-up', reason: `still failing after ${maxRetries} retr${maxRetries === 1 ? 'y' : 'ies'}` };
      if (input.retryAfterMs !== undefined) {
        if (input.retryAfterMs > maxRetryAfterMs) {
          return { action: 'give-up', reason: `the server asked to wait ${Math.ceil(input.retryAfterMs / 1000)} s, longer than the ${Math.ceil(maxRetryAfterMs / 1000)} s limit` };
        }
        return { action: 'retry', delayMs: Math.max(0, input.retryAfterMs) };
      }
      return { action: 'retry', delayMs: Math.min(maxDelayMs, baseDelayMs * 2 ** transportRetries) };
    },
  };
}
