import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, lstat, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, normalize } from 'node:path';
import { openAtomicWriter } from '../fs/atomicWrite.js';
import { pairSafeIndex, snapUtf8Range } from '../../runtime/policies/utf8.js';
import { UnknownLocatorError, type SpillChunk, type SpillRange, type SpillStore } from '../../runtime/spillStore.js';

export interface FsSpillStoreOptions {
  /** Where the session's private directory is created (default: the OS temp directory). */
  baseDir?: string;
  /** Bytes `save` encodes, hashes and writes at a time (default 1 MiB; at least 6). */
  sliceBytes?: number;
}

export interface FsSpillStore extends SpillStore {
  /** The session's private directory (created, mode 0700, on first use). */
  directory(): Promise<string>;
  /** Deletes the session directory and every spill in it. */
  remove(): Promise<void>;
}

// Content-addressed names: the same output spilled twice is stored once, and a name can never
// carry a separator or `..`.
const SPILL_NAME = /^[0-9a-f]{64}\.txt$/;
const UTF8_MAX_CHAR_BYTES = 4;
/** Bytes encoded, hashed and written at a time by `save`, unless told otherwise. */
const DEFAULT_SLICE_BYTES = 1 << 20;
const encoder = new TextEncoder();

/**
 * A Node spill store: one private directory per session (0700) holding one file per spill (0600).
 * Locators are the spill files' absolute paths; a locator naming anything but a spill file directly
 * inside this session's directory is refused.
 */
export function createFsSpillStore(options: FsSpillStoreOptions = {}): FsSpillStore {
  let dir: Promise<string> | undefined;
  const sliceBytes = Math.max(6, Math.floor(options.sliceBytes ?? DEFAULT_SLICE_BYTES));
  const directory = () =>
    (dir ??= (async () => {
      const created = await mkdtemp(join(options.baseDir ?? tmpdir(), 'dsh-spill-'));
      await chmod(created, 0o700);
      return created;
    })());

  async function fileOf(locator: string): Promise<string> {
    if (!dir || typeof locator !== 'string' || !isAbsolute(locator) || normalize(locator) !== locator) throw new UnknownLocatorError(locator);
    const d = await dir;
    if (dirname(locator) !== d || !SPILL_NAME.test(basename(locator))) throw new UnknownLocatorError(locator);
    return locator;
  }

  return {
    directory,

    async save(text: string) {
      const d = await directory();
      // The text is encoded, hashed and written a slice at a time, so a huge output is never
      // held twice: only one slice's bytes exist at once. The name (the content's hash) is known
      // only at the end, so the bytes go to a temp file that is then renamed, or dropped when the
      // same output is already stored.
      const out = await openAtomicWriter(join(d, 'spill.txt'), 0o600);
      try {
        const hash = createHash('sha256');
        const slice = new Uint8Array(Math.max(6, Math.min(sliceBytes, text.length * 3)));
        // UTF-16 units per slice: a unit is at most 3 bytes (a surrogate pair is 4 for 2 units),
        // so a slice always fits whole; at least 2, so a slice moved back off the middle of a
        // pair is never empty.
        const sliceUnits = Math.floor(slice.length / 3);
        for (let from = 0; from < text.length; ) {
          // Never cut through a surrogate pair: each half alone would be written as U+FFFD.
          const to = pairSafeIndex(text, Math.min(text.length, from + sliceUnits));
          const { read, written } = encoder.encodeInto(text.slice(from, to), slice);
          if (read !== to - from) throw new Error(`spill: encoded ${read} of ${to - from} UTF-16 units`);
          const bytes = slice.subarray(0, written);
          hash.update(bytes);
          await out.write(bytes);
          from = to;
        }
        const file = join(d, `${hash.digest('hex')}.txt`);
        const existing = await lstat(file).catch(() => undefined);
        if (existing?.isFile() && existing.size === out.size) {
          await out.abort();
          return { locator: file };
        }
        // Synced, then renamed: a reader (or a crash) never sees half a spill under its final name.
        await out.commit(file);
        return { locator: file };
      } catch (e) {
        await out.abort();
        throw e;
      }
    },

    async read(locator: string, range: SpillRange = {}): Promise<SpillChunk> {
      const file = await fileOf(locator);
      let fh;
      try {
        // O_NOFOLLOW: a symlink planted under a spill name is not followed out of the directory.
        fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
      } catch {
        throw new UnknownLocatorError(locator);
      }
      try {
        const st = await fh.stat();
        if (!st.isFile()) throw new UnknownLocatorError(locator);
        const total = st.size;
        const offset = Math.min(Math.max(0, Math.floor(range.offset ?? 0)), total);
        const length = Math.max(0, Math.floor(range.length ?? total - offset));
        // Read a few bytes beyond both ends so the range can be snapped to character starts.
        const from = Math.max(0, offset - UTF8_MAX_CHAR_BYTES);
        const to = Math.min(total, offset + length + UTF8_MAX_CHAR_BYTES);
        const buf = Buffer.alloc(to - from);
        let got = 0;
        while (got < buf.length) {
          const { bytesRead } = await fh.read(buf, got, buf.length - got, from + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        const { start, end } = snapUtf8Range((i) => (i >= from && i < from + got ? buf[i - from] : undefined), total, offset, length);
        return { text: buf.toString('utf8', start - from, end - from), offset: start, nextOffset: end, totalBytes: total, done: end >= total };
      } finally {
        await fh.close();
      }
    },

    async remove() {
      if (!dir) return;
      const d = await dir.catch(() => undefined);
      dir = undefined;
      if (d) await rm(d, { recursive: true, force: true });
    },
  };
}
