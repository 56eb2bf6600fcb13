import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { mkdir, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { VerifiedDir } from './verifiedDir.js';

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
   * Resolves to the written file's status (mtime, size, mode) as of just before the rename.
   */
  commit(file?: string): Promise<Stats>;
  /** Closes and deletes the temp file. Safe to call after a failed `write` or `commit`. */
  abort(): Promise<void>;
}

/**
 * Opens a temp file for an atomic replace of the entry `name` in the open, verified directory
 * `dir`. The temp file is created and renamed through the directory's descriptor only (see
 * `VerifiedDir`), so swapping the directory's name for a symlink meanwhile cannot make the write
 * land anywhere else. `commit(other)` takes another entry name in `dir`. `mode` is applied exactly
 * (umask notwithstanding); without it the file is created 0666 less the umask. The caller keeps
 * ownership of `dir` (it must stay open until `commit` or `abort` has finished).
 */
export async function openAtomicWriterIn(dir: VerifiedDir, name: string, mode?: number, onDone?: () => Promise<void>): Promise<AtomicFileWriter> {
  dir.at(name); // a single component, or INVALID_ARGS
  const temp = `.${name}.${randomBytes(6).toString('hex')}.dsh-tmp`;
  // O_EXCL: never opens an existing entry, a symlink planted under the temp name included.
  const fh: FileHandle = await dir.openFile(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode ?? 0o666);
  let size = 0;
  let open_ = true;
  let done = false;
  let committed = false;
  let finished = false;
  const close = async () => {
    if (!open_) return;
    open_ = false;
    await fh.close();
  };
  const finish = async () => {
    if (finished) return;
    finished = true;
    await onDone?.();
  };
  return {
    tempPath: join(dir.real, temp),
    get size() {
      return size;
    },
    async write(data: Uint8Array) {
      if (done) throw new Error(`atomic write of ${name} is already finished`);
      // A file write may be short; go on from where it stopped.
      for (let off = 0; off < data.length; ) {
        const { bytesWritten } = await fh.write(data, off, data.length - off, size);
        off += bytesWritten;
        size += bytesWritten;
      }
    },
    async commit(target = name) {
      if (done) throw new Error(`atomic write of ${name} is already finished`);
      done = true;
      try {
        dir.at(target);
        // open() applies the umask; an explicit chmod restores an existing file's exact mode.
        if (mode !== undefined) await fh.chmod(mode);
        await fh.sync();
        const st = await fh.stat();
        await close();
        await dir.rename(temp, target);
        committed = true;
        await finish();
        return st;
      } catch (e) {
        await close().catch(() => undefined);
        await dir.unlink(temp).catch(() => undefined);
        await finish().catch(() => undefined);
        throw e;
      }
    },
    async abort() {
      done = true;
      if (!committed) {
        await close().catch(() => undefined);
        await dir.unlink(temp).catch(() => undefined);
      }
      await finish().catch(() => undefined);
    },
  };
}

/**
 * Opens a temp file beside `file` for an atomic replace (the directory is created if missing,
 * then held open by descriptor: see `openAtomicWriterIn`). `commit(other)` takes another path in
 * the same directory. `mode` is applied exactly (umask notwithstanding); without it the file is
 * created 0666 less the umask.
 */
export async function openAtomicWriter(file: string, mode?: number): Promise<AtomicFileWriter> {
  const path = dirname(file);
  await mkdir(path, { recursive: true });
  const dir = await VerifiedDir.open(path);
  let inner: AtomicFileWriter;
  try {
    inner = await openAtomicWriterIn(dir, basename(file), mode, () => dir.close());
  } catch (e) {
    await dir.close();
    throw e;
  }
  return {
    get tempPath() {
      return join(path, basename(inner.tempPath));
    },
    get size() {
      return inner.size;
    },
    write: (data) => inner.write(data),
    async commit(target = file) {
      if (dirname(target) !== path) throw new Error(`atomic write: ${target} is not in ${path}`);
      return inner.commit(basename(target));
    },
    abort: () => inner.abort(),
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
