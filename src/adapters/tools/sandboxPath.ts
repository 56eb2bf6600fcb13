/**
 * Resolving a model-given path inside the workspace, through descriptors only (DESIGN: "the
 * filesystem is hostile"). The walk starts at the root, opened and verified by descriptor, and
 * opens one component at a time without following symlinks (`VerifiedDir`). A symlink met on the
 * way is read through its directory's descriptor; its target must lie inside the root and is
 * walked again from the root descriptor. What the walk hands back is an open directory and a
 * name in it, so the caller reads, lists, creates and renames through that descriptor and never
 * reopens a checked path by name: a process swapping a directory for a symlink meanwhile cannot
 * make a tool touch anything outside the root.
 */
import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { ErrorCode } from '../../protocol/index.js';
import { ToolError } from '../../runtime/toolError.js';
import { isInsideDir, VerifiedDir } from '../fs/verifiedDir.js';

const MAX_SYMLINK_HOPS = 40;
/** How often a walk starts over because an entry changed under it before it gives up. */
const MAX_RACE_RETRIES = 64;

const errno = (e: unknown) => (e as NodeJS.ErrnoException | undefined)?.code;
const isMissing = (e: unknown) => errno(e) === 'ENOENT' || errno(e) === 'ENOTDIR';

/**
 * `realpath` that also works for paths that do not exist yet: the existing prefix is resolved and
 * the missing rest appended. A dangling symlink is followed to where it points, because writing
 * through it would create its target. Resolves by name: use it only to learn where a path
 * outside the root leads, never to decide what to open.
 */
export async function realpathAllowMissing(path: string, hops = 0): Promise<string> {
  if (hops > MAX_SYMLINK_HOPS) throw new ToolError(ErrorCode.TOOL_FAILED, `too many levels of symbolic links at ${path}`);
  try {
    return await realpath(path);
  } catch (e) {
    if (!isMissing(e)) throw e;
  }
  const parent = dirname(path);
  if (parent === path) return path;
  const realParent = await realpathAllowMissing(parent, hops);
  const own = join(realParent, basename(path));
  const st = await lstat(own).catch(() => undefined);
  if (st?.isSymbolicLink()) return realpathAllowMissing(resolve(realParent, await readlink(own)), hops + 1);
  return own;
}

/** True when `path` is `root` or lies below it (both already resolved). */
export const isInside = isInsideDir;

/** A path inside the workspace: its resolved location and how to show it to the model. */
export interface SandboxedPath {
  /** Absolute, symlinks resolved. */
  readonly real: string;
  /** Relative to the workspace root ('.' for the root itself). */
  readonly display: string;
}

/** Where a resolved path is: its open parent directory and its name there. */
export interface ResolvedEntry {
  readonly path: SandboxedPath;
  /**
   * The open directory holding the entry (the root's own handle for the root itself); undefined
   * when a directory on the way does not exist (so neither does the entry). The caller closes it.
   */
  readonly parent: VerifiedDir | undefined;
  /** The entry's name in `parent`; undefined for the root itself. */
  readonly name: string | undefined;
  /** The entry's lstat when the walk reached it (never a symlink unless `followFinal` was false); undefined when missing. */
  readonly stat: Stats | undefined;
}

export interface ResolveOptions {
  /** Create missing directories on the way (default false). */
  createDirs?: boolean;
  /** Follow a symlink in the last component (default true; false leaves it as the entry). */
  followFinal?: boolean;
  /**
   * With `createDirs`: called with the path the walk is heading for before it creates anything,
   * and again whenever a symlink on the way changes that path; a rejection ends the walk.
   */
  beforeCreate?: (path: SandboxedPath) => Promise<void>;
}

function outside(given: string): ToolError {
  return new ToolError(ErrorCode.FS_OUTSIDE_WORKSPACE, `${JSON.stringify(given)} resolves outside the workspace; only paths inside it are allowed`);
}

const toParts = (rel: string) => rel.split(sep).filter((p) => p !== '' && p !== '.');

/**
 * The components below `realRoot` of the absolute `abs`, or `FS_OUTSIDE_WORKSPACE`. A path that
 * is not lexically under the root may still lead into it through symlinks outside (a root given
 * through a symlink, say): it is resolved by name only to learn where it points, and what lies
 * inside is then walked from the root descriptor like any other path.
 */
async function partsBelowRoot(realRoot: string, abs: string, given: string): Promise<string[]> {
  if (isInsideDir(realRoot, abs)) return toParts(relative(realRoot, abs));
  const real = await realpathAllowMissing(abs);
  if (!isInsideDir(realRoot, real)) throw outside(given);
  return toParts(relative(realRoot, real));
}

/** Opens the workspace root by descriptor and checks it is where `realRoot` says. */
export async function openRoot(realRoot: string): Promise<VerifiedDir> {
  let dir: VerifiedDir;
  try {
    dir = await VerifiedDir.open(realRoot, realRoot);
  } catch (e) {
    if (e instanceof ToolError) throw e;
    throw new ToolError(ErrorCode.FS_NOT_FOUND, `workspace root ${realRoot} is not accessible: ${(e as Error).message}`);
  }
  if (dir.real !== realRoot) {
    await dir.close();
    throw new ToolError(ErrorCode.TOOL_FAILED, `workspace root ${realRoot} was moved (it is now ${dir.real})`);
  }
  return dir;
}

function sandboxed(realRoot: string, parts: readonly string[]): SandboxedPath {
  return { real: join(realRoot, ...parts), display: parts.join('/') || '.' };
}

/** Thrown inside the walk to start it over: after a symlink, or when an entry changed between two steps. */
class Restart {
  constructor(readonly raced: boolean) {}
}

/**
 * Walks `given` from the root descriptor (see the module comment) and returns the entry's open
 * parent directory and name. The caller owns (and must close) `parent`.
 */
export async function resolveEntry(realRoot: string, given: string, options: ResolveOptions = {}): Promise<ResolvedEntry> {
  if (given.includes('\0')) throw new ToolError(ErrorCode.INVALID_ARGS, 'path contains a NUL byte');
  const followFinal = options.followFinal ?? true;
  let parts = await partsBelowRoot(realRoot, resolve(realRoot, given), given);
  let hops = 0;
  let races = 0;
  for (;;) {
    if (races > MAX_RACE_RETRIES) {
      throw new ToolError(ErrorCode.TOOL_FAILED, `${sandboxed(realRoot, parts).display} kept changing while it was being opened; try again`);
    }
    if (options.createDirs && options.beforeCreate) await options.beforeCreate(sandboxed(realRoot, parts));
    const root = await openRoot(realRoot);
    let dir = root;
    let keep = false;
    try {
      let i = 0;
      for (; i < parts.length; i++) {
        const name = parts[i]!;
        const last = i === parts.length - 1;
        if (!last) {
          // The common case first: a real directory, opened without following a symlink.
          try {
            const child = await dir.openDir(name);
            await dir.close();
            dir = child;
            continue;
          } catch (e) {
            if (errno(e) !== 'ENOTDIR' && errno(e) !== 'ELOOP' && errno(e) !== 'ENOENT') throw e;
          }
        }
        // Not a directory (or the last component): see what it is.
        const st = await dir.lstat(name);
        if (st?.isSymbolicLink() && (!last || followFinal)) {
          if (++hops > MAX_SYMLINK_HOPS) throw new ToolError(ErrorCode.TOOL_FAILED, `too many levels of symbolic links in ${JSON.stringify(given)}`);
          let target: string;
          try {
            target = await dir.readlink(name);
          } catch (e) {
            if (errno(e) === 'EINVAL' || errno(e) === 'ENOENT') throw new Restart(true);
            throw e;
          }
          // The link's directory is parts[0..i), a real path below the root; its target is
          // resolved against that and must land inside the root, and is then walked from the root.
          const abs = resolve(realRoot, ...parts.slice(0, i), target);
          parts = [...(await partsBelowRoot(realRoot, abs, given)), ...parts.slice(i + 1)];
          throw new Restart(false);
        }
        if (last) {
          keep = true;
          return { path: sandboxed(realRoot, parts), parent: dir, name, stat: st };
        }
        if (!st) {
          if (!options.createDirs) {
            keep = true;
            await dir.close();
            return { path: sandboxed(realRoot, parts), parent: undefined, name, stat: undefined };
          }
          // Look at it again: it is a directory now, or whatever raced us to the name.
          if (!(await dir.mkdir(name)) && ++races > MAX_RACE_RETRIES) throw new Restart(true);
          i--;
          continue;
        }
        if (!st.isDirectory()) {
          if (options.createDirs) throw new ToolError(ErrorCode.TOOL_FAILED, `${parts.slice(0, i + 1).join('/')} is not a directory`);
          keep = true;
          await dir.close();
          return { path: sandboxed(realRoot, parts), parent: undefined, name, stat: undefined };
        }
        // A directory after all: it was swapped in between the open and the lstat. Look again.
        throw new Restart(true);
      }
      // No components: the root itself.
      keep = true;
      return { path: sandboxed(realRoot, parts), parent: dir, name: undefined, stat: await dir.stat() };
    } catch (e) {
      if (!(e instanceof Restart)) throw e;
      if (e.raced) races++;
    } finally {
      // Each step closed the directory before it; only the current one can still be open.
      if (!keep) await dir.close().catch(() => undefined);
    }
  }
}

/**
 * Resolves a model-given path against the (already resolved) workspace root, following every
 * symlink; anything that ends up outside the root is `FS_OUTSIDE_WORKSPACE`. Only for showing or
 * keying a path: to act on it, use `resolveEntry` / `openInWorkspace` and their descriptors.
 */
export async function resolveInWorkspace(realRoot: string, given: string): Promise<SandboxedPath> {
  const entry = await resolveEntry(realRoot, given);
  await entry.parent?.close();
  return entry.path;
}

/** A workspace path opened through descriptors. The caller closes `handle` / `dir`. */
export type OpenedEntry =
  | { readonly kind: 'file'; readonly path: SandboxedPath; readonly handle: FileHandle; readonly stat: Stats }
  | { readonly kind: 'dir'; readonly path: SandboxedPath; readonly dir: VerifiedDir }
  | { readonly kind: 'missing'; readonly path: SandboxedPath }
  | { readonly kind: 'other'; readonly path: SandboxedPath; readonly stat: Stats };

/**
 * Opens what a model-given path names: a regular file (read-only, by descriptor), a directory (a
 * `VerifiedDir`), or says it is missing or something else (a FIFO, a socket, a device). Nothing
 * is opened by name; an entry swapped for a symlink between the walk and the open is walked again.
 */
export async function openInWorkspace(realRoot: string, given: string): Promise<OpenedEntry> {
  for (let races = 0; ; races++) {
    const entry = await resolveEntry(realRoot, given);
    const { parent, name, path } = entry;
    if (!parent || !entry.stat) {
      await parent?.close();
      return { kind: 'missing', path };
    }
    if (name === undefined) return { kind: 'dir', path, dir: parent };
    try {
      if (entry.stat.isDirectory()) return { kind: 'dir', path, dir: await parent.openDir(name) };
      if (!entry.stat.isFile()) return { kind: 'other', path, stat: entry.stat };
      const handle = await parent.openFile(name, constants.O_RDONLY);
      const st = await handle.stat();
      if (!st.isFile()) {
        await handle.close();
        return st.isDirectory() ? { kind: 'dir', path, dir: await parent.openDir(name) } : { kind: 'other', path, stat: st };
      }
      return { kind: 'file', path, handle, stat: st };
    } catch (e) {
      const raced = errno(e) === 'ELOOP' || errno(e) === 'ENOTDIR' || errno(e) === 'ENOENT';
      if (!raced || races >= MAX_RACE_RETRIES) {
        if (raced) throw new ToolError(ErrorCode.TOOL_FAILED, `${path.display} kept changing while it was being opened; try again`);
        throw e;
      }
    } finally {
      await parent.close();
    }
  }
}
