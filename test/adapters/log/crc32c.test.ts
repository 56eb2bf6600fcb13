import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checksumHex, crc32c, crc32cOfUtf8, parseChecksum } from '../../../src/adapters/log/crc32c.js';

/** CRC-32C bit by bit, the definition the sliced implementation must match. */
function crc32cBitwise(b: Uint8Array, start: number, end: number): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) {
    c ^= b[i]!;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

describe('CRC-32C of log lines', () => {
  it('gives the standard check values', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(Buffer.alloc(32))).toBe(0x8a9136aa); // RFC 3720 B.4: 32 bytes of zeros
    expect(crc32c(Buffer.alloc(32, 0xff))).toBe(0x62a8ab43); // 32 bytes of ones
    expect(crc32c(Buffer.from(Array.from({ length: 32 }, (_, i) => i)))).toBe(0x46dd794e); // incrementing
    expect(crc32c(Buffer.alloc(0))).toBe(0);
    expect(crc32cOfUtf8('123456789')).toBe(0xe3069283);
  });

  it('of a string equals that of its UTF-8 bytes; equals the bit-by-bit definition on any bytes and range', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        expect(crc32cOfUtf8(s)).toBe(crc32c(Buffer.from(s, 'utf8')));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(), fc.nat(), (bytes, a, b) => {
        const start = bytes.length ? a % bytes.length : 0;
        const end = start + (bytes.length - start ? b % (bytes.length - start + 1) : 0);
        expect(crc32cBitwise(bytes, start, end)).toBe(crc32c(bytes, start, end));
      }),
      { numRuns: 2000 },
    );
  });

  it('is written as 8 lowercase hex digits, and read back only in that form', () => {
    for (const n of [0, 1, 0xe3069283, 0xffffffff, 0x0000abcd]) {
      const hex = checksumHex(n);
      expect(hex).toMatch(/^[0-9a-f]{8}$/);
      expect(parseChecksum(Buffer.from(hex), 0)).toBe(n);
    }
    for (const bad of ['E3069283', 'e306928', 'e306928g', ' e306928', 'e3069-83']) {
      expect(parseChecksum(Buffer.from(bad), 0)).toBe(-1);
    }
  });
});
