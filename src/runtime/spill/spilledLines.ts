/**
 * Lines of a spilled text without loading it: the two readers built on its line index
 * (lineIndex.ts), a page of lines for `read` and a stream of whole lines for `grep`. A page costs
 * time in proportion to the page, whatever the size of the spill.
 */
import { utf8Decode, utf8Encode, utf8Length } from './utf8.js';
import { LineIndexBuilder, type SpillLineIndex } from './lineIndex.js';
import type { SpillStore } from './spillStore.js';

/** Bytes `spilledLineBlocks` asks the store for at a time. */
export const SPILL_BLOCK_BYTES = 1 << 20;

// Indexes built by scanning, for stores that keep none: once per store and locator.
const scanned = new WeakMap<SpillStore, Map<string, Promise<SpillLineIndex>>>();

/**
 * The line index of a spilled text: the store's own (built when it saved the text) or, for a store
 * without `lineIndex`, one built by reading the text once in blocks and kept for later pages.
 */
export function spillLineIndex(store: SpillStore, locator: string): Promise<SpillLineIndex> {
  if (typeof store.lineIndex === 'function') return store.lineIndex(locator);
  let byLocator = scanned.get(store);
  if (!byLocator) scanned.set(store, (byLocator = new Map()));
  let index = byLocator.get(locator);
  if (!index) {
    index = scanLineIndex(store, locator);
    byLocator.set(locator, index);
    // A failed scan (unknown locator) is not remembered.
    index.catch(() => byLocator.delete(locator));
  }
  return index;
}

async function scanLineIndex(store: SpillStore, locator: string): Promise<SpillLineIndex> {
  const builder = new LineIndexBuilder();
  for (let offset = 0; ; ) {
    const chunk = await store.read(locator, { offset, length: SPILL_BLOCK_BYTES });
    builder.push(utf8Encode(chunk.text));
    if (chunk.done || chunk.nextOffset <= offset) break;
    offset = chunk.nextOffset;
  }
  return builder.finish();
}

/** Index of the last checkpoint whose line is at most `line`. */
function checkpointAtOrBefore(index: SpillLineIndex, line: number): number {
  let lo = 0;
  let hi = index.lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (index.lines[mid]! <= line) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** A page of lines of a spilled text; the shape of `read`'s page. */
export interface SpilledPage {
  /** The lines exactly as saved (newlines kept). */
  readonly text: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly totalLines: number;
  /** Set when the one line shown was longer than the page and only its start is included. */
  readonly cutLineBytes?: number;
}

/**
 * Lines `[offset, offset + limit)` (1-based) of a spilled text, stopping early at whole lines so
 * the page stays within `maxBytes`; a first line longer than that is cut at a character boundary.
 * Reads one window of at most `stride + maxBytes` bytes from the store, after the line index.
 */
export async function readSpilledPage(store: SpillStore, locator: string, offset: number, limit: number, maxBytes: number): Promise<SpilledPage> {
  const index = await spillLineIndex(store, locator);
  const totalLines = index.totalLines;
  const first = Math.max(1, Math.floor(offset));
  if (first > totalLines) return { text: '', startLine: first, endLine: first - 1, totalLines };
  const budget = Math.max(0, Math.floor(maxBytes));
  const k = checkpointAtOrBefore(index, first);
  const from = index.offsets[k]!;
  // The first line starts under `stride` bytes past the checkpoint; past it, `budget` bytes and a
  // few more show whether the page's last line fits (the store may move the end back to a
  // character start by up to 3 bytes).
  const window = await store.read(locator, { offset: from, length: index.stride + budget + 8 });
  if (window.offset !== from) throw new Error(`spill: the store read from byte ${window.offset}, not the line start ${from}`);
  const text = window.text;
  let pos = 0;
  for (let n = index.lines[k]!; n < first; n++) {
    const nl = text.indexOf('\n', pos);
    if (nl === -1) throw new Error(`spill: line ${first} is not where the line index puts it`);
    pos = nl + 1;
  }
  const out: string[] = [];
  let bytes = 0;
  let end = first - 1;
  for (let n = first; n <= totalLines && n < first + Math.max(0, Math.floor(limit)); n++) {
    const nl = text.indexOf('\n', pos);
    // A line the window does not finish is longer than what is left of the budget.
    const complete = nl !== -1 || window.done;
    const line = nl === -1 ? text.slice(pos) : text.slice(pos, nl + 1);
    const size = utf8Length(line);
    if (!complete || bytes + size > budget) {
      if (out.length === 0) {
        const lineBytes = complete ? size : longLineBytes(index, n, from + utf8Length(text.slice(0, pos)));
        return { text: utf8Prefix(line, budget), startLine: first, endLine: n, totalLines, cutLineBytes: lineBytes };
      }
      break;
    }
    out.push(line);
    bytes += size;
    end = n;
    pos = nl === -1 ? text.length : nl + 1;
  }
  return { text: out.join(''), startLine: first, endLine: end, totalLines };
}

/**
 * Length of line `n` (starting at byte `start`) when it runs past the window: it is then at least
 * `stride` long, so the next line start is a checkpoint, or it is the last line.
 */
function longLineBytes(index: SpillLineIndex, n: number, start: number): number {
  const k = checkpointAtOrBefore(index, n + 1);
  return index.lines[k] === n + 1 ? index.offsets[k]! - start : index.totalBytes - start;
}

/** The longest prefix of `line` within `maxBytes` UTF-8 bytes that ends on a character boundary. */
function utf8Prefix(line: string, maxBytes: number): string {
  // A character is at least one byte: the first `maxBytes` UTF-16 units hold every candidate.
  const bytes = utf8Encode(line.slice(0, maxBytes + 1));
  let end = Math.min(maxBytes, bytes.length);
  while (end > 0 && end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--;
  return utf8Decode(bytes.subarray(0, end));
}

/** A run of whole lines of a spilled text; `firstLine` is the 1-based number of its first line. */
export interface SpilledLineBlock {
  readonly firstLine: number;
  /** Whole lines, newlines kept (the text's last line may lack one). */
  readonly text: string;
}

/**
 * The lines of a spilled text in blocks of about `blockBytes`, each block whole lines: what grep
 * over a locator holds at once is one block (or one line, when a line is longer than a block).
 * Checks `signal` between blocks.
 */
export async function* spilledLineBlocks(store: SpillStore, locator: string, signal?: AbortSignal, blockBytes = SPILL_BLOCK_BYTES): AsyncGenerator<SpilledLineBlock> {
  let carry = '';
  let line = 1;
  for (let offset = 0; ; ) {
    signal?.throwIfAborted();
    const chunk = await store.read(locator, { offset, length: blockBytes });
    const text = carry === '' ? chunk.text : carry + chunk.text;
    const last = chunk.done || chunk.nextOffset <= offset;
    const cut = last ? text.length : text.lastIndexOf('\n') + 1;
    if (cut > 0) {
      const block = text.slice(0, cut);
      yield { firstLine: line, text: block };
      for (let i = block.indexOf('\n'); i !== -1; i = block.indexOf('\n', i + 1)) line++;
    }
    carry = text.slice(cut);
    if (last) return;
    offset = chunk.nextOffset;
  }
}
