/**
 * Describes anything a user-supplied function may throw (or abort with) as text, and never throws
 * while doing it: a value without a prototype, a `toString` or a `message` getter that throws, a
 * revoked Proxy, a symbol. Every place that turns a thrown value into a message goes through here.
 */
import { boundedVisible } from './visibleText.js';

/** Longest description kept: a thrown value is hostile input too. */
const MAX_CHARS = 4_000;

/** Bounded and printable: a thrown message reaches the model and the terminal (SPEC §10.6). */
const clip = (s: string): string => boundedVisible(s, MAX_CHARS);

function attempt<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

function isErrorLike(e: object): boolean {
  return attempt(() => e instanceof Error) === true;
}

/** `Name: message` for an Error, the text of anything else (`String(e)` where that works). */
export function describeThrown(e: unknown): string {
  try {
    if (typeof e === 'string') return clip(e);
    if (e === null || (typeof e !== 'object' && typeof e !== 'function')) return clip(String(e));
    if (isErrorLike(e)) {
      const name = attempt(() => (e as Error).name);
      const message = thrownMessage(e);
      return clip(typeof name === 'string' && name !== '' ? `${name}: ${message}` : message);
    }
    return clip(printable(e));
  } catch {
    return '(an undescribable thrown value)';
  }
}

/** Just the message of an Error (its text for anything else), never throwing. */
export function thrownMessage(e: unknown): string {
  try {
    if (typeof e === 'string') return clip(e);
    if (e === null || (typeof e !== 'object' && typeof e !== 'function')) return clip(String(e));
    if (isErrorLike(e)) {
      const message = attempt(() => (e as Error).message);
      return clip(typeof message === 'string' ? message : `(an ${kindOf(e)} whose message is unreadable)`);
    }
    return clip(printable(e));
  } catch {
    return '(an undescribable thrown value)';
  }
}

/** `String(e)` when it gives a string, else a string `message` it has, else what kind of thing it is. */
function printable(e: object): string {
  const s = attempt(() => String(e));
  if (typeof s === 'string') return s;
  const message = attempt(() => (e as { message?: unknown }).message);
  if (typeof message === 'string') return message;
  return `(an unprintable ${kindOf(e)})`;
}

function kindOf(e: object): string {
  const name = attempt(() => {
    const proto: unknown = Object.getPrototypeOf(e);
    if (proto === null) return 'object without a prototype';
    const ctor = (proto as { constructor?: unknown }).constructor;
    const n = typeof ctor === 'function' ? (ctor as { name?: unknown }).name : undefined;
    return typeof n === 'string' && n !== '' ? n : undefined;
  });
  return name ?? (typeof e === 'function' ? 'function' : 'object');
}
