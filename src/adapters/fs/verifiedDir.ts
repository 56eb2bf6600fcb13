/**
 * A directory held open by descriptor, whose real path was checked to lie under a bound. Every
 * operation on an entry goes through `/proc/self/fd/<fd>/<name>`: the kernel resolves that prefix
 * to the open directory itself (a "magic link"), so a rename or symlink swap of the directory's
 * name after it was opened cannot redirect the operation. Entries are never followed if they are
 * symlinks (O_NOFOLLOW; lstat, readlink, mkdir, rename and unlink never follow the last
 * component). This is how Node, which has no `openat`, gets `openat` semantics. Linux only.
 */
import type { Dirent, Stats } from 'node:fs';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, rename, unlink, type FileHandle } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import { ErrorCode } from '../../protocol/index.js';
import { ToolError } from '../../runtime/toolError.js';

const errno = (e: unknown) => (e as NodeJS.ErrnoException | undefined)?.code;

/** True when `path` is `root` or lies below it (both absolute, symlinks resolved). */
export function isInsideDir(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The path `/proc/self/fd/<fd>` that resolves to whatever the descriptor has open. */
export const fdPath = (fd: number) => `/proc/self/fd/${fd}`;

/**
 * Where an open descriptor's file or directory really is now (the kernel's own record, read
 * from `/proc/self/fd`). A deleted file's path ends in " (deleted)".
 */
export async function realPathOfFd(fd: number): Promise<string> {
  try {
    return await readlink(fdPath(fd));
  } catch (e) {
    throw new ToolError(
      ErrorCode.TOOL_FAILED,
      `cannot verify where descriptor ${fd} points (${errno(e) ?? (e as Error).message}); the workspace sandbox needs Linux with /proc mounted`,
    );
  }
}

/** Refuses anything but a single path component (no separator, NUL, `.` or `..`). */
function checkName(name: string): string {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new ToolError(ErrorCode.INVALID_ARGS, `${JSON.stringify(name)} is not a single file name`);
  }
  return name;
}

/** Opens never follow a final symlink, never block on a FIFO, and close on exec. */
const SAFE_OPEN = constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** An open directory checked to lie under `bound`; see the module comment. Close it when done. */
export class VerifiedDir {
  private closed = false;

  private constructor(
    private readonly handle: FileHandle,
    /** The directory's real path when it was opened and checked. */
    readonly real: string,
    /** Everything opened from here must lie at or below this (resolved) path. */
    readonly bound: string,
  ) {}

  /**
   * Opens `path` (absolute; symlinks in it are followed, as for any name given by the caller) as
   * a directory and checks that its real path lies at or below `bound` (default: the directory
   * itself becomes the bound). Throws `FS_OUTSIDE_WORKSPACE` otherwise.
   */
  static async open(path: string, bound?: string): Promise<VerifiedDir> {
    const fh = await open(path, constants.O_RDONLY | constants.O_DIRECTORY);
    return VerifiedDir.adopt(fh, bound);
  }

  private static async adopt(fh: FileHandle, bound: string | undefined): Promise<VerifiedDir> {
    try {
      const real = await realPathOfFd(fh.fd);
      if (bound !== undefined && !isInsideDir(bound, real)) {
        throw new ToolError(ErrorCode.FS_OUTSIDE_WORKSPACE, `a directory opened inside ${bound} is now at ${real}, outside it; nothing was done there`);
      }
      return new VerifiedDir(fh, real, bound ?? real);
    } catch (e) {
      await fh.close().catch(() => undefined);
      throw e;
    }
  }

  /** The descriptor number (valid until `close`). */
  get fd(): number {
    return this.handle.fd;
  }

  /** `/proc/self/fd/<fd>/<name>`: a path to the entry `name` that resolves through this descriptor. */
  at(name: string): string {
    if (this.closed) throw new Error(`directory ${this.real} is already closed`);
    return `${fdPath(this.handle.fd)}/${checkName(name)}`;
  }

  /** The directory's own status (through the descriptor). */
  stat(): Promise<Stats> {
    return this.handle.stat();
  }

  /** lstat of an entry (a symlink is described, not followed); undefined when there is none. */
  async lstat(name: string): Promise<Stats | undefined> {
    try {
      return await lstat(this.at(name));
    } catch (e) {
      if (errno(e) === 'ENOENT') return undefined;
      throw e;
    }
  }

  /** The target of the symlink `name` (EINVAL if it is not one). */
  readlink(name: string): Promise<string> {
    return readlink(this.at(name));
  }

  /**
   * Opens the subdirectory `name` without following a symlink, and checks that it still lies
   * under the bound. Fails with ENOTDIR if `name` is not (or no longer) a real directory.
   */
  async openDir(name: string): Promise<VerifiedDir> {
    const fh = await open(this.at(name), constants.O_RDONLY | constants.O_DIRECTORY | SAFE_OPEN);
    return VerifiedDir.adopt(fh, this.bound);
  }

  /**
   * Opens the file `name` with `flags` (O_NOFOLLOW and O_NONBLOCK are added: a symlink fails with
   * ELOOP, a FIFO does not hang the open) and checks that it lies under the bound.
   */
  async openFile(name: string, flags: number, mode?: number): Promise<FileHandle> {
    const fh = await open(this.at(name), flags | SAFE_OPEN, mode);
    try {
      const real = await realPathOfFd(fh.fd);
      if (!isInsideDir(this.bound, real)) {
        throw new ToolError(ErrorCode.FS_OUTSIDE_WORKSPACE, `a file opened inside ${this.bound} is at ${real}, outside it; nothing was read or written`);
      }
      return fh;
    } catch (e) {
      await fh.close().catch(() => undefined);
      throw e;
    }
  }

  /** Creates the subdirectory `name`; false if something by that name already exists. */
  async mkdir(name: string, mode = 0o777): Promise<boolean> {
    try {
      await mkdir(this.at(name), mode);
      return true;
    } catch (e) {
      if (errno(e) === 'EEXIST') return false;
      throw e;
    }
  }

  /**
   * The entries of this directory, listed through the descriptor (never by name). The directory
   * must still lie under the bound before and after the listing: one moved out of the workspace
   * by another process after it was opened lists nothing (`FS_OUTSIDE_WORKSPACE`).
   */
  async readdir(): Promise<Dirent[]> {
    await this.checkStillInside('listed');
    const entries = await readdir(`${fdPath(this.handle.fd)}/`, { withFileTypes: true });
    await this.checkStillInside('listed');
    return entries;
  }

  private async checkStillInside(doing: string): Promise<void> {
    const now = await realPathOfFd(this.handle.fd);
    if (!isInsideDir(this.bound, now)) {
      throw new ToolError(ErrorCode.FS_OUTSIDE_WORKSPACE, `a directory opened inside ${this.bound} is now at ${now}, outside it; nothing was ${doing} there`);
    }
  }

  /** Renames the entry `from` to `to`, both in this directory (a symlink is moved, not followed). */
  rename(from: string, to: string): Promise<void> {
    return rename(this.at(from), this.at(to));
  }

  /** Removes the entry `name` from this directory (a symlink itself, not its target). */
  unlink(name: string): Promise<void> {
    return unlink(this.at(name));
  }

  /** Closes the descriptor; safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }
}
