import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * A file being written atomically: bytes go to a temp file beside the target; `commit` syncs it
 * and renames it over the target, so readers (and a crash) see either the old content or the whole
 * new one, never a mix. Exactly one of `commit` and `abort` ends it.
 */
export interface AtomicFileWriter {
  /** The temp file (hidden, in the target's directory). */
  readonly tempPath: string;
  /** Bytes written so far. */
  readonly size: number;
  /** Appends `data`; the caller may reuse `data` once this resolves. */
  write(data: Uint8Array): Promise<void>;
  /**
   * Syncs the temp file and renames it over `file` (default: the target given at open; another
   * name must be in the same directory, so the rename stays atomic). The temp file is gone after.
   */
  commit(file?: string): Promise<void>;
  /** Closes and deletes the temp file. Safe to call after a failed `write` or `commit`. */
  abort(): Promise<void>;
}

/**
 * Opens a temp file beside `file` for an atomic replace. `mode` is applied exactly (umask
 * notwithstanding); without it the file is created 0666 less the umask.
 */
export async function openAtomicWriter(file: string, mode?: number): Promise<AtomicFileWriter> {
  const dir = dirname(file);
  await mkdir(dir, { recursive: true });
  const temp = join(dir, `.${basename(file)}.${randomBytes(6).toString('hex')}.dsh-tmp`);
  const fh: FileHandle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode ?? 0o666);
  let size = 0;
  let open_ = true;
  let done = false;
  let committed = false;
  const close = async () => {
    if (!open_) return;
    open_ = false;
    await fh.close();
  };
  return {
    tempPath: temp,
    get size() {
      return size;
    },
    async write(data: Uint8Array) {
      if (done) throw new Error(`atomic write of ${file} is already finished`);
      // A file write may be short; go on from where it stopped.
      for (let off = 0; off < data.length; ) {
        const { bytesWritten } = await fh.write(data, off, data.length - off, size);
        off += bytesWritten;
        size += bytesWritten;
      }
    },
    async commit(target = file) {
      if (done) throw new Error(`atomic write of ${file} is already finished`);
      if (dirname(target) !== dir) throw new Error(`atomic write: ${target} is not in ${dir}`);
      done = true;
      try {
        // open() applies the umask; an explicit chmod restores an existing file's exact mode.
        if (mode !== undefined) await fh.chmod(mode);
        await fh.sync();
        await close();
        await rename(temp, target);
        committed = true;
      } catch (e) {
        await close().catch(() => undefined);
        await unlink(temp).catch(() => undefined);
        throw e;
      }
    },
    async abort() {
      done = true;
      if (committed) return;
      await close().catch(() => undefined);
      await unlink(temp).catch(() => undefined);
    },
  };
}

/**
 * Replaces `file` with `data` so that readers see either the old or the new content, never a
 * mix: the bytes go to a temp file beside it, are synced, then renamed over it. An existing
 * file's permission bits are kept.
 */
export async function writeFileAtomic(file: string, data: Uint8Array, mode?: number): Promise<void> {
  const w = await openAtomicWriter(file, mode);
  try {
    await w.write(data);
    await w.commit();
  } catch (e) {
    await w.abort();
    throw e;
  }
}
