/** A page of lines cut from a text, for `read`. */
export interface LinePage {
  /** The lines exactly as in the text (newlines kept). */
  readonly text: string;
  /** 1-based first line shown (0 when the text has no such line). */
  readonly startLine: number;
  /** 1-based last line shown (startLine - 1 when none). */
  readonly endLine: number;
  readonly totalLines: number;
  /** Set when the last line shown was too long for the page and only its start is included. */
  readonly cutLineBytes?: number;
}

/**
 * Lines `[offset, offset + limit)` of `text` (1-based), stopping early at whole lines so the page
 * stays within `maxBytes`; a single line longer than that is cut at a character boundary.
 */
export function pageLines(text: string, offset: number, limit: number, maxBytes: number): LinePage {
  const lines = text === '' ? [] : text.split(/(?<=\n)/);
  const totalLines = lines.length;
  const first = Math.max(1, offset);
  if (first > totalLines) return { text: '', startLine: first, endLine: first - 1, totalLines };
  const out: string[] = [];
  let bytes = 0;
  let end = first - 1;
  for (let n = first; n <= totalLines && n < first + limit; n++) {
    const line = lines[n - 1]!;
    const size = Buffer.byteLength(line, 'utf8');
    if (bytes + size > maxBytes) {
      if (out.length === 0) {
        const cut = cutUtf8(line, maxBytes);
        return { text: cut, startLine: first, endLine: n, totalLines, cutLineBytes: size };
      }
      break;
    }
    out.push(line);
    bytes += size;
    end = n;
  }
  return { text: out.join(''), startLine: first, endLine: end, totalLines };
}

/** The longest prefix of `line` within `maxBytes` UTF-8 bytes that ends on a character boundary. */
function cutUtf8(line: string, maxBytes: number): string {
  const buf = Buffer.from(line, 'utf8');
  let end = Math.min(maxBytes, buf.length);
  while (end > 0 && end < buf.length && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.toString('utf8', 0, end);
}
