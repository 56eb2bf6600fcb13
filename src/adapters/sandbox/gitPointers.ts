/**
 * The git directories a workspace's `.git` *file* points at (a worktree made by `git worktree
 * add`, a submodule's checkout, `git init --separate-git-dir`): its `gitdir:` line, and that
 * directory's `commondir` (where a worktree's shared config and hooks live). Git runs what they
 * hold as it runs what `<root>/.git` holds, so they are protected as a whole too (SPEC §10.7).
 * Only those inside the workspace are returned: outside it, tools cannot write anyway.
 *
 * {@link parseGitdirFile} is pure; {@link gitPointerDirs} reads the two small files (by `lstat`
 * and `readFileSync`: a `.git` that is a symlink is not followed, and it is protected itself).
 */
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';

/** The path a `.git` file names (`gitdir: ../x/.git`), or undefined when it names none. */
export function parseGitdirFile(text: string): string | undefined {
  const m = /^gitdir:[ \t]*(.+?)[ \t]*$/m.exec(text);
  return m?.[1];
}

/** The directory a one-line pointer file names, resolved from `base`; undefined if there is none. */
function follow(base: string, pointer: string | undefined): string | undefined {
  if (pointer === undefined || pointer === '') return undefined;
  const abs = isAbsolute(pointer) ? pointer : resolve(base, pointer);
  try {
    return realpathSync(abs);
  } catch {
    // Not there (yet): protect the name as written, so that nothing can be made there either.
    return abs;
  }
}

function readSmall(path: string): string | undefined {
  try {
    const st = lstatSync(path);
    if (!st.isFile() || st.size > 64 * 1024) return undefined;
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

const inside = (root: string, p: string) => {
  const rel = relative(root, p);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
};

/**
 * The git directories `<root>/.git` (a file) leads to, inside `root` (absolute, resolved):
 * its `gitdir` and that directory's `commondir`. Empty when `.git` is a directory or absent.
 */
export function gitPointerDirs(root: string): string[] {
  const gitdirText = readSmall(join(root, '.git'));
  if (gitdirText === undefined) return [];
  const out: string[] = [];
  const gitdir = follow(root, parseGitdirFile(gitdirText));
  if (gitdir === undefined) return [];
  out.push(gitdir);
  const commondirText = readSmall(join(gitdir, 'commondir'));
  const common = follow(gitdir, commondirText?.split('\n')[0]?.trim());
  if (common !== undefined) out.push(common);
  return out.filter((d) => inside(root, d));
}
