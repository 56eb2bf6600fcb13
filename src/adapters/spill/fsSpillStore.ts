import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, lstat, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, normalize } from 'node:path';
import { writeFileAtomic } from '../fs/atomicWrite.js';
import { snapUtf8Range } from '../../runtime/policies/utf8.js';
import { UnknownLocatorError, type SpillChunk, type SpillRange, type SpillStore } from '../../runtime/spillStore.js';

export interface FsSpillStoreOptions {
  /** Where the session's private directory is created (default: the OS temp directory). */
  baseDir?: string;
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

/**
 * A Node spill store: one private directory per session (0700) holding one file per spill (0600).
 * Locators are the spill files' absolute paths; a locator naming anything but a spill file directly
 * inside this session's directory is refused.
 */
export function createFsSpillStore(options: FsSpillStoreOptions = {}): FsSpillStore {
  let dir: Promise<string> | undefined;
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
      const bytes = Buffer.from(text, 'utf8');
      const file = join(d, `${createHash('sha256').update(bytes).digest('hex')}.txt`);
      const existing = await lstat(file).catch(() => undefined);
      if (existing?.isFile() && existing.size === bytes.length) return { locator: file };
      // Write then rename, so a reader (or a crash) never sees half a spill under its final name.
      await writeFileAtomic(file, bytes, 0o600);
      return { locator: file };
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
