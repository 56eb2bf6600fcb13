import { snapUtf8Range, utf8Decode, utf8Encode } from './utf8.js';
import { LineIndexBuilder, type SpillLineIndex } from './lineIndex.js';
import { UnknownLocatorError, type SpillChunk, type SpillMeta, type SpillRange, type SpillStore } from './spillStore.js';

export interface MemorySpillStore extends SpillStore {
  /** Number of spills held. */
  readonly size: number;
  lineIndex(locator: string): Promise<SpillLineIndex>;
}

/** Options of `createMemorySpillStore`. */
export interface MemorySpillStoreOptions {
  /** Bytes between line index checkpoints (default 16 KiB; small values are for tests). */
  lineIndexStride?: number;
}

let storeCount = 0;

/** A browser-safe spill store that keeps every spill in memory for the life of the session. */
export function createMemorySpillStore(options: MemorySpillStoreOptions = {}): MemorySpillStore {
  // Distinct per store, so a locator from one session is unknown to another.
  const storeId = `${++storeCount}`;
  const spills = new Map<string, { bytes: Uint8Array; meta: SpillMeta; lines: SpillLineIndex }>();
  const held = (locator: string) => {
    const spill = spills.get(locator);
    if (!spill) throw new UnknownLocatorError(locator);
    return spill;
  };
  return {
    get size() {
      return spills.size;
    },
    async save(text: string, meta: SpillMeta) {
      const locator = `memory-spill:${storeId}/${spills.size + 1}`;
      const bytes = utf8Encode(text);
      const lines = new LineIndexBuilder(options.lineIndexStride);
      lines.push(bytes);
      spills.set(locator, { bytes, meta: { ...meta }, lines: lines.finish() });
      return { locator };
    },
    async read(locator: string, range: SpillRange = {}): Promise<SpillChunk> {
      const { bytes } = held(locator);
      const total = bytes.length;
      const { start, end } = snapUtf8Range((i) => bytes[i], total, range.offset ?? 0, range.length ?? total);
      return { text: utf8Decode(bytes.subarray(start, end)), offset: start, nextOffset: end, totalBytes: total, done: end >= total };
    },
    async lineIndex(locator: string) {
      return held(locator).lines;
    },
  };
}
