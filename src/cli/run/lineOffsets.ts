/** Byte offsets of lines in a file, counted by newlines (no parsing): where line N starts, and how many lines there are. */
import { createReadStream } from 'node:fs';

/** `start`: byte offset where 1-based line `line` starts (the size when it is past the end); `lines`: lines in the file (a last line without newline counts). */
export async function lineOffsets(file: string, line: number): Promise<{ start: number; lines: number }> {
  let pos = 0;
  let lineNo = 1;
  let start = line <= 1 ? 0 : -1;
  let lastByte = 0x0a;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let i = chunk.indexOf(0x0a);
    while (i !== -1) {
      lineNo++;
      if (lineNo === line) start = pos + i + 1;
      i = chunk.indexOf(0x0a, i + 1);
    }
    pos += chunk.length;
    if (chunk.length) lastByte = chunk[chunk.length - 1]!;
  }
  const lines = lastByte === 0x0a ? lineNo - 1 : lineNo;
  return { start: start === -1 ? pos : start, lines };
}
