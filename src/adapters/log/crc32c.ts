/**
 * CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF;
 * the checksum of iSCSI, ext4 and LevelDB logs), the checksum of every JSONL log line. It detects
 * every error of up to 32 bits in a row (so every single-bit flip) in a line of any length.
 *
 * Node has no CRC-32C of its own (`zlib.crc32` is the other CRC-32, and only from 20.15), so it
 * is computed here, slicing by 8 (eight table lookups per 8 bytes, about as fast as a native call
 * per line of a few hundred bytes).
 */

/** 8 tables of 256: table k maps a byte to its CRC shifted through k more zero bytes. */
function makeTables(): Int32Array {
  const t = new Int32Array(256 * 8);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) for (let k = 1; k < 8; k++) t[k * 256 + n] = (t[(k - 1) * 256 + n]! >>> 8) ^ t[t[(k - 1) * 256 + n]! & 255]!;
  return t;
}

const T = makeTables();

/** CRC-32C of bytes[start, end), unsigned. */
export function crc32c(b: Uint8Array, start = 0, end = b.length): number {
  let c = -1;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    const a = c ^ (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24));
    c =
      T[1792 + (a & 255)]! ^
      T[1536 + ((a >>> 8) & 255)]! ^
      T[1280 + ((a >>> 16) & 255)]! ^
      T[1024 + (a >>> 24)]! ^
      T[768 + b[i + 4]!]! ^
      T[512 + b[i + 5]!]! ^
      T[256 + b[i + 6]!]! ^
      T[b[i + 7]!]!;
  }
  for (; i < end; i++) c = T[(c ^ b[i]!) & 255]! ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

/**
 * CRC-32C of the UTF-8 encoding of `s`, without encoding it first. `s` must be well-formed
 * (no lone surrogate): `JSON.stringify` output always is (it escapes them).
 */
export function crc32cOfUtf8(s: string): number {
  let c = -1;
  for (let i = 0; i < s.length; i++) {
    let u = s.charCodeAt(i);
    if (u < 0x80) {
      c = T[(c ^ u) & 255]! ^ (c >>> 8);
      continue;
    }
    if (u < 0x800) {
      c = T[(c ^ (0xc0 | (u >> 6))) & 255]! ^ (c >>> 8);
    } else if (u < 0xd800 || u > 0xdbff) {
      c = T[(c ^ (0xe0 | (u >> 12))) & 255]! ^ (c >>> 8);
      c = T[(c ^ (0x80 | ((u >> 6) & 63))) & 255]! ^ (c >>> 8);
    } else {
      u = 0x10000 + ((u - 0xd800) << 10) + (s.charCodeAt(++i) - 0xdc00);
      c = T[(c ^ (0xf0 | (u >> 18))) & 255]! ^ (c >>> 8);
      c = T[(c ^ (0x80 | ((u >> 12) & 63))) & 255]! ^ (c >>> 8);
      c = T[(c ^ (0x80 | ((u >> 6) & 63))) & 255]! ^ (c >>> 8);
    }
    c = T[(c ^ (0x80 | (u & 63))) & 255]! ^ (c >>> 8);
  }
  return (c ^ -1) >>> 0;
}

/** The 8 lowercase hex digits of a checksum. */
export function checksumHex(crc: number): string {
  return crc.toString(16).padStart(8, '0');
}

/**
 * The checksum written as 8 lowercase hex digits at bytes[at, at + 8), or -1 if they are not
 * exactly that (an upper-case digit is refused too: one flipped bit turns `a` into `A`).
 */
export function parseChecksum(b: Uint8Array, at: number): number {
  let v = 0;
  for (let k = 0; k < 8; k++) {
    const d = b[at + k];
    if (d === undefined) return -1;
    if (d >= 48 && d <= 57) v = v * 16 + (d - 48);
    else if (d >= 97 && d <= 102) v = v * 16 + (d - 87);
    else return -1;
  }
  return v;
}
