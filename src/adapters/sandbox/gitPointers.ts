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
import { lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
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

/** The `worktree = …` of a git config's `[core]` section, or undefined. */
export function parseCoreWorktree(text: string): string | undefined {
  let inCore = false;
  for (const line of text.split('\n')) {
    const section = /^\s*\[([^\]]*)\]/.exec(line);
    if (section) inCore = section[1]!.trim().toLowerCase() === 'core';
    const m = inCore ? /^\s*worktree\s*=\s*(.*?)\s*$/i.exec(line) : null;
    if (m) return m[1]!.replace(/^"(.*)"$/, '$1');
  }
  return undefined;
}

const MAX_CHECKOUTS = 256;

/**
 * The `.git` files of the checkouts a git directory manages, inside `root`: each submodule's
 * (`<gitdir>/modules/<name>/config` names its worktree; nested submodules too) and each linked
 * worktree's (`<gitdir>/worktrees/<name>/gitdir` names its `.git` file). The host's `git status`
 * recurses into submodules through their `.git` file, so a rewritten one (`gitdir: ../evil`)
 * would run a planted config; these files are protected as the git directory is. Everything is
 * read from the git directory itself (protected), never from the checkout.
 */
export function gitCheckoutFiles(root: string, gitDirs: readonly string[]): string[] {
  const out = new Set<string>();
  const subdirs = (dir: string) => {
    try {
      return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(dir, e.name));
    } catch {
      return [];
    }
  };
  // Under `modules/`: a directory with a `config` is a submodule's git dir (which may have
  // `modules/` of its own); one without is a grouping directory (a submodule named `a/b`).
  const walkModules = (dir: string, depth: number) => {
    if (depth > 16 || out.size >= MAX_CHECKOUTS) return;
    for (const d of subdirs(dir)) {
      const config = readSmall(join(d, 'config'));
      if (config === undefined) {
        walkModules(d, depth + 1);
        continue;
      }
      const worktree = parseCoreWorktree(config);
      if (worktree !== undefined) out.add(join(isAbsolute(worktree) ? worktree : resolve(d, worktree), '.git'));
      visitGitDir(d, depth + 1);
    }
  };
  const visitGitDir = (gitdir: string, depth: number) => {
    walkModules(join(gitdir, 'modules'), depth);
    for (const wt of subdirs(join(gitdir, 'worktrees'))) {
      const file = readSmall(join(wt, 'gitdir'))?.split('\n')[0]?.trim();
      if (file) out.add(isAbsolute(file) ? file : resolve(wt, file));
    }
  };
  for (const g of gitDirs) visitGitDir(g, 0);
  return [...out].filter((f) => inside(root, f));
}

/**
 * Everything git-related to protect besides `<root>/.git`: the directories a `.git` file leads
 * to ({@link gitPointerDirs}) and the `.git` files of the checkouts they, and `<root>/.git`,
 * manage ({@link gitCheckoutFiles}). For `protectedPaths({ …, ...gitLocations(root) })`.
 */
export function gitLocations(root: string): { gitDirs: string[]; gitFiles: string[] } {
  const gitDirs = gitPointerDirs(root);
  return { gitDirs, gitFiles: gitCheckoutFiles(root, [join(root, '.git'), ...gitDirs]) };
}
