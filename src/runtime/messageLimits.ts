/**
 * How big a person's message may be: a turn's prompt, a follow-up, a steer. Every provider caps a
 * user message; dsh caps it before anything is logged, so an oversized message is refused at the
 * API (a `MessageLimitError`, nothing logged, nothing sent) instead of growing the log and the
 * process and then failing at the provider.
 *
 * - `maxMessageBytes` (default 1 MiB of UTF-8): each prompt, follow-up and steer.
 * - Steers waiting for the turn's next model request all enter that one request, so together they
 *   count as one message: their bytes together are bounded by `maxMessageBytes`, and at most
 *   `maxPendingSteers` (default 100) wait at once. Past either, `steer` refuses; once the pending
 *   ones are delivered (the next step starts), steering goes on. Memory for steers is bounded.
 *
 * Browser-safe.
 */
import type { SteerOutcome, TurnHandle } from './turns.js';

/** How big a prompt, follow-up or steer may be, and how many steers may wait. */
export interface MessageLimits {
  /** Most UTF-8 bytes of one prompt, follow-up or steer; and of the steers waiting together (default 1 MiB). */
  maxMessageBytes: number;
  /** Most steers waiting for one turn's next model request (default 100). */
  maxPendingSteers: number;
}

/** The default message limits: 1 MiB a message, 100 steers waiting. */
export const DEFAULT_MESSAGE_LIMITS: MessageLimits = Object.freeze({ maxMessageBytes: 1 << 20, maxPendingSteers: 100 });

/** `MESSAGE_TOO_LARGE`: one message is over `maxMessageBytes`; `STEERS_PENDING`: the waiting steers are at their bound. */
export type MessageLimitCode = 'MESSAGE_TOO_LARGE' | 'STEERS_PENDING';

/** A message refused for its size before anything was logged. */
export class MessageLimitError extends RangeError {
  constructor(
    readonly code: MessageLimitCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'MessageLimitError';
  }
}

/** UTF-8 length of `s`, counted without encoding it (a lone surrogate counts 3, as TextEncoder writes U+FFFD). */
export function utf8Bytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

const size = (n: number) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(n % (1 << 20) ? 1 : 0)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(n % 1024 ? 1 : 0)} KiB` : `${n} bytes`);

/** Throws `MESSAGE_TOO_LARGE` when `message` (a string) is over the limit; returns its byte length. */
export function checkMessageSize(message: unknown, what: string, limits: MessageLimits): number {
  if (typeof message !== 'string') return 0; // the runner's own check refuses a non-string
  // Cheap first: a string of at most max/3 UTF-16 units is within any max.
  if (message.length * 3 <= limits.maxMessageBytes) return utf8Bytes(message);
  const bytes = utf8Bytes(message);
  if (bytes > limits.maxMessageBytes) {
    throw new MessageLimitError('MESSAGE_TOO_LARGE', `the ${what} is ${size(bytes)}, over the ${size(limits.maxMessageBytes)} a message may be (maxMessageBytes); nothing was logged or sent`);
  }
  return bytes;
}

/**
 * A function that gives a turn handle with its `steer` bounded: each steer by size, the waiting
 * ones by count and total size. One handle always gives the same bounded handle (a late steer's
 * follow-up turn is the same object for every steer it took).
 */
export function steerLimiter(limits: MessageLimits): (handle: TurnHandle) => TurnHandle {
  const bounded = new WeakMap<TurnHandle, TurnHandle>();
  const wrap = (handle: TurnHandle): TurnHandle => {
    let out = bounded.get(handle);
    if (!out) bounded.set(handle, (out = withSteerLimits(handle, limits, wrap)));
    return out;
  };
  return wrap;
}

function withSteerLimits(handle: TurnHandle, limits: MessageLimits, wrap: (h: TurnHandle) => TurnHandle): TurnHandle {
  let pending = 0;
  let pendingBytes = 0;
  const steer = (message: string): Promise<SteerOutcome> => {
    const bytes = checkMessageSize(message, 'steer', limits);
    if (pending + 1 > limits.maxPendingSteers) {
      throw new MessageLimitError('STEERS_PENDING', `${pending} steers already wait for the turn's next model request (maxPendingSteers ${limits.maxPendingSteers}); try again once they are delivered`);
    }
    if (pendingBytes + bytes > limits.maxMessageBytes) {
      throw new MessageLimitError('STEERS_PENDING', `the steers waiting for the turn's next model request would be ${size(pendingBytes + bytes)} together, over the ${size(limits.maxMessageBytes)} one request may carry (maxMessageBytes); try again once they are delivered`);
    }
    const out = handle.steer(message).then((o) => (o.delivered === 'follow-up' ? { ...o, turn: wrap(o.turn) } : o));
    pending++;
    pendingBytes += bytes;
    const settled = () => {
      pending--;
      pendingBytes -= bytes;
    };
    out.then(settled, settled);
    return out;
  };
  // The handle itself is left as it is (its other members may be getters): only `steer` differs.
  return new Proxy(handle, { get: (target, key) => (key === 'steer' ? steer : Reflect.get(target, key, target)) });
}
