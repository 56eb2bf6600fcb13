/**
 * UTF-8 arithmetic shared by the spill policy and the spill stores. Spill sizes and offsets are
 * counted in UTF-8 bytes (SPEC §8.7), so every cut must land on a character start or the text
 * would not survive a round trip.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

/** The UTF-8 encoding of `text` (lone surrogates become U+FFFD, as in any UTF-8 writer). */
export function utf8Encode(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Decodes UTF-8 bytes that start and end on character boundaries. */
export function utf8Decode(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Below this many UTF-16 units `utf8Length` counts in JS; above, in slices through `encodeInto`. */
const COUNT_IN_JS_BELOW = 1024;
/** Where `utf8Length` encodes a slice to count it, allocated on first use and then reused. */
let scratch: Uint8Array | undefined;

/**
 * UTF-8 byte length of `text` without allocating its encoding. A long text is encoded a slice at
 * a time into one small reused buffer: `encodeInto` counts an order of magnitude faster than a
 * `charCodeAt` loop over a long string does.
 */
export function utf8Length(text: string): number {
  if (text.length < COUNT_IN_JS_BELOW) return utf8LengthInJs(text);
  const buf = (scratch ??= new Uint8Array(1 << 16));
  // At most 3 bytes per UTF-16 unit, so a slice always fits whole.
  const step = Math.floor(buf.length / 3);
  let n = 0;
  for (let from = 0; from < text.length; ) {
    const to = pairSafeIndex(text, Math.min(text.length, from + step));
    n += encoder.encodeInto(text.slice(from, to), buf).written;
    from = to;
  }
  return n;
}

/** Counts UTF-8 bytes unit by unit; stops as soon as the count passes `stopAbove`. */
function utf8LengthInJs(text: string, stopAbove = Infinity): number {
  let n = 0;
  for (let i = 0; i < text.length && n <= stopAbove; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3; // BMP character, or a lone surrogate encoded as U+FFFD
  }
  return n;
}

/**
 * True when `text` is more than `maxBytes` UTF-8 bytes; stops counting as soon as it is, so a
 * huge text costs no more than the limit to check.
 */
export function utf8LengthExceeds(text: string, maxBytes: number): boolean {
  // Every UTF-16 unit is 1–3 bytes (a surrogate pair is 4 bytes for 2 units).
  if (text.length > maxBytes) return true;
  if (text.length * 3 <= maxBytes) return false;
  return utf8LengthInJs(text, maxBytes) > maxBytes;
}

/**
 * `i` as a place to cut `text` (a UTF-16 index) without splitting a surrogate pair: moved back by
 * one when it falls between the two halves of a pair. Encoding the pieces cut at such indices one
 * by one gives exactly the bytes of encoding the whole text.
 */
export function pairSafeIndex(text: string, i: number): number {
  if (i <= 0 || i >= text.length) return i;
  const c = text.charCodeAt(i - 1);
  return c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i) & 0xfc00) === 0xdc00 ? i - 1 : i;
}

/** True when byte index `i` (of `total`) is where a character starts; `byteAt` may be sparse. */
function isCharStart(byteAt: (i: number) => number | undefined, i: number, total: number): boolean {
  if (i <= 0 || i >= total) return true;
  const b = byteAt(i);
  return b === undefined || (b & 0xc0) !== 0x80;
}

/**
 * Snaps a byte range to character boundaries: the start moves back to the start of its character,
 * the end moves back too (so consecutive chunks never overlap), but a non-empty request always
 * gets at least one whole character. `byteAt` needs only the bytes within 3 of both ends.
 */
export function snapUtf8Range(
  byteAt: (i: number) => number | undefined,
  total: number,
  offset: number,
  length: number,
): { start: number; end: number } {
  let start = Math.min(Math.max(0, Math.floor(offset)), total);
  while (!isCharStart(byteAt, start, total)) start--;
  const want = Math.max(0, Math.floor(length));
  let end = Math.min(total, start + want);
  while (!isCharStart(byteAt, end, total)) end--;
  if (want > 0 && end <= start && start < total) {
    end = start + 1;
    while (!isCharStart(byteAt, end, total)) end++;
  }
  return { start, end };
}
