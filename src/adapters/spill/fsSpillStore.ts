import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdtemp, open, readdir, rename, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, normalize } from 'node:path';
import { pairSafeIndex, snapUtf8Range } from '../../runtime/spill/utf8.js';
import { LineIndexBuilder, type SpillLineIndex } from '../../runtime/spill/lineIndex.js';
import { spillLineIndex } from '../../runtime/spill/spilledLines.js';
import { UnknownLocatorError, type SpillChunk, type SpillMeta, type SpillRange, type SpillSaveOptions, type SpillStore } from '../../runtime/spill/spillStore.js';

/** Options of `createFsSpillStore`: where the private per-session directories go. */
export interface FsSpillStoreOptions {
  /** Where the session's private directory is created (default: the OS temp directory). */
  baseDir?: string;
  /** Bytes `save` encodes, hashes and writes at a time (default 1 MiB; at least 6). */
  sliceBytes?: number;
  /** Bytes between line index checkpoints (default 16 KiB; small values are for tests). */
  lineIndexStride?: number;
}

export interface FsSpillStore extends SpillStore {
  /** The session's private directory (created, mode 0700, on first use). */
  directory(): Promise<string>;
  /** Deletes the session directory and every spill in it. */
  remove(): Promise<void>;
  lineIndex(locator: string): Promise<SpillLineIndex>;
}

// Content-addressed names: the same output spilled twice is stored once, and a name can never
// carry a separator or `..`.
const SPILL_NAME = /^[0-9a-f]{64}\.txt$/;
const UTF8_MAX_CHAR_BYTES = 4;
/** Bytes encoded, hashed and written at a time by `save`, unless told otherwise. */
const DEFAULT_SLICE_BYTES = 1 << 20;
const encoder = new TextEncoder();
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * The session's directory, opened once. Every file in it is created, opened, renamed and deleted
 * through the open directory (`/proc/self/fd/<fd>/<name>`), never by re-resolving the directory's
 * path: swapping the directory (or a parent) for a symlink afterwards redirects nothing. Where
 * `/proc/self/fd` does not reach the directory (not Linux), names are resolved through the path.
 */
interface SpillDir {
  readonly path: string;
  readonly handle: FileHandle;
  /** The name of `name` inside this directory, for the fs calls. */
  at(name: string): string;
}

async function openSpillDir(baseDir: string): Promise<SpillDir> {
  const path = await mkdtemp(join(baseDir, 'dsh-spill-'));
  // O_NOFOLLOW | O_DIRECTORY: what mkdtemp made, or nothing (a symlink planted since is refused).
  const handle = await open(path, constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  try {
    await handle.chmod(0o700);
    const st = await handle.stat();
    const uid = process.getuid?.();
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) {
      throw new Error(`spill: ${path} is not this process's private directory`);
    }
    const viaFd = `/proc/self/fd/${handle.fd}`;
    const reached = await lstat(`${viaFd}/.`).catch(() => undefined);
    const direct = reached !== undefined && reached.ino === st.ino && reached.dev === st.dev;
    return { path, handle, at: direct ? (name) => `${viaFd}/${name}` : (name) => join(path, name) };
  } catch (e) {
    await handle.close().catch(() => undefined);
    throw e;
  }
}

/**
 * A Node spill store: one private directory per session (0700) holding one file per spill (0600).
 * Locators are the spill files' absolute paths; a locator naming anything but a spill file directly
 * inside this session's directory is refused. Each spill's line index is built while it is saved
 * and kept in memory, so `read` can fetch a page of lines by reading about the page.
 */
export function createFsSpillStore(options: FsSpillStoreOptions = {}): FsSpillStore {
  let dir: Promise<SpillDir> | undefined;
  const sliceBytes = Math.max(6, Math.floor(options.sliceBytes ?? DEFAULT_SLICE_BYTES));
  const indexes = new Map<string, SpillLineIndex>();
  const opened = () => (dir ??= openSpillDir(options.baseDir ?? tmpdir()));

  /** The spill file name a locator names in this session's directory, or `UnknownLocatorError`. */
  async function nameOf(locator: string): Promise<{ d: SpillDir; name: string }> {
    if (!dir || typeof locator !== 'string' || !isAbsolute(locator) || normalize(locator) !== locator) throw new UnknownLocatorError(locator);
    const d = await dir;
    const name = basename(locator);
    if (dirname(locator) !== d.path || !SPILL_NAME.test(name)) throw new UnknownLocatorError(locator);
    return { d, name };
  }

  /** Opens a spill file for reading; never follows a symlink planted under its name. */
  async function openSpill(locator: string): Promise<{ fh: FileHandle; size: number; name: string }> {
    const { d, name } = await nameOf(locator);
    let fh: FileHandle;
    try {
      fh = await open(d.at(name), constants.O_RDONLY | O_NOFOLLOW);
    } catch {
      throw new UnknownLocatorError(locator);
    }
    const st = await fh.stat().catch(() => undefined);
    if (!st?.isFile()) {
      await fh.close();
      throw new UnknownLocatorError(locator);
    }
    return { fh, size: st.size, name };
  }

  const store: FsSpillStore = {
    directory: async () => (await opened()).path,

    async save(text: string, _meta: SpillMeta, saveOptions: SpillSaveOptions = {}) {
      const d = await opened();
      const signal = saveOptions.signal;
      // The text is encoded, hashed, indexed and written a slice at a time, so a huge output is
      // never held twice: only one slice's bytes exist at once. The name (the content's hash) is
      // known only at the end, so the bytes go to a temp file (created exclusively, never through
      // a symlink) that is then renamed, or dropped when the same output is already stored.
      const temp = `.spill-${randomBytes(8).toString('hex')}.part`;
      const out = await open(d.at(temp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW, 0o600);
      let closed = false;
      try {
        await out.chmod(0o600);
        const hash = createHash('sha256');
        const lines = new LineIndexBuilder(options.lineIndexStride);
        const slice = new Uint8Array(Math.max(6, Math.min(sliceBytes, text.length * 3)));
        // UTF-16 units per slice: a unit is at most 3 bytes (a surrogate pair is 4 for 2 units),
        // so a slice always fits whole; at least 2, so a slice moved back off the middle of a
        // pair is never empty.
        const sliceUnits = Math.floor(slice.length / 3);
        let size = 0;
        for (let from = 0; from < text.length; ) {
          signal?.throwIfAborted();
          // Never cut through a surrogate pair: each half alone would be written as U+FFFD.
          const to = pairSafeIndex(text, Math.min(text.length, from + sliceUnits));
          const { read, written } = encoder.encodeInto(text.slice(from, to), slice);
          if (read !== to - from) throw new Error(`spill: encoded ${read} of ${to - from} UTF-16 units`);
          const bytes = slice.subarray(0, written);
          hash.update(bytes);
          lines.push(bytes);
          for (let off = 0; off < bytes.length; ) off += (await out.write(bytes, off, bytes.length - off)).bytesWritten;
          size += bytes.length;
          from = to;
        }
        signal?.throwIfAborted();
        const name = `${hash.digest('hex')}.txt`;
        const locator = join(d.path, name);
        const index = lines.finish();
        const existing = await lstat(d.at(name)).catch(() => undefined);
        if (existing?.isFile() && existing.size === size) {
          closed = true;
          await out.close();
          await unlink(d.at(temp));
        } else {
          // Synced, then renamed: a reader (or a crash) never sees half a spill under its final name.
          await out.sync();
          closed = true;
          await out.close();
          await rename(d.at(temp), d.at(name));
        }
        indexes.set(name, index);
        return { locator };
      } catch (e) {
        if (!closed) await out.close().catch(() => undefined);
        await unlink(d.at(temp)).catch(() => undefined);
        throw e;
      }
    },

    async read(locator: string, range: SpillRange = {}): Promise<SpillChunk> {
      const { fh, size: total } = await openSpill(locator);
      try {
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

    async lineIndex(locator: string): Promise<SpillLineIndex> {
      const { name } = await nameOf(locator);
      const index = indexes.get(name);
      if (index) return index;
      // Not saved by this store object (cannot happen through save): build it by reading once.
      return spillLineIndex({ save: store.save, read: store.read }, locator);
    },

    async remove() {
      if (!dir) return;
      const d = await dir.catch(() => undefined);
      dir = undefined;
      indexes.clear();
      if (!d) return;
      // Through the open directory: whatever the path names by now is left alone.
      const names = await readdir(d.at('.')).catch(() => [] as string[]);
      await Promise.all(names.map((n) => unlink(d.at(n)).catch(() => undefined)));
      await d.handle.close().catch(() => undefined);
      // The now empty directory, by path: rmdir never follows a symlink, nor removes a non-empty
      // directory that was swapped in.
      await rmdir(d.path).catch(() => undefined);
    },
  };
  return store;
}
