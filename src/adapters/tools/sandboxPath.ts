import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ErrorCode } from '../../protocol/index.js';
import { ToolError } from '../../runtime/toolError.js';

const MAX_SYMLINK_HOPS = 40;

const isMissing = (e: unknown) => {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
};

/**
 * `realpath` that also works for paths that do not exist yet: the existing prefix is resolved and
 * the missing rest appended. A dangling symlink is followed to where it points, because writing
 * through it would create its target.
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
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** A path inside the workspace: its resolved location and how to show it to the model. */
export interface SandboxedPath {
  /** Absolute, symlinks resolved. */
  readonly real: string;
  /** Relative to the workspace root ('.' for the root itself). */
  readonly display: string;
}

/**
 * Resolves a model-given path against the (already resolved) workspace root, following every
 * symlink; anything that ends up outside the root is `FS_OUTSIDE_WORKSPACE`.
 */
export async function resolveInWorkspace(realRoot: string, given: string): Promise<SandboxedPath> {
  if (given.includes('\0')) throw new ToolError(ErrorCode.INVALID_ARGS, 'path contains a NUL byte');
  const real = await realpathAllowMissing(resolve(realRoot, given));
  if (!isInside(realRoot, real)) {
    throw new ToolError(ErrorCode.FS_OUTSIDE_WORKSPACE, `${JSON.stringify(given)} resolves outside the workspace; only paths inside it are allowed`);
  }
  return { real, display: relative(realRoot, real) || '.' };
}
