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

/** UTF-8 byte length of `text` without allocating its encoding. */
export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
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
