import { constants, type Dirent } from 'node:fs';
import { posix, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import type { VerifiedDir } from '../fs/verifiedDir.js';
import { openRoot } from './sandboxPath.js';

const toPosix = (p: string) => (sep === '/' ? p : p.split(sep).join('/'));
/** A `.gitignore` larger than this is not read (git itself refuses ones over 100 MiB). */
const MAX_GITIGNORE_BYTES = 4 * 1024 * 1024;

/**
 * Reads `.gitignore` in an open directory, by descriptor and without following a symlink (git
 * does not follow a symlinked `.gitignore` either); undefined when there is none to read.
 */
async function readGitignoreIn(dir: VerifiedDir): Promise<string | undefined> {
  let fh;
  try {
    fh = await dir.openFile('.gitignore', constants.O_RDONLY);
  } catch {
    return undefined;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size > MAX_GITIGNORE_BYTES) return undefined;
    return await fh.readFile('utf8');
  } catch {
    return undefined;
  } finally {
    await fh.close();
  }
}

/** Opens the real directory `parts` below the root by descriptor, following no symlink; undefined if it is not one. */
async function openRealDir(realRoot: string, parts: readonly string[]): Promise<VerifiedDir | undefined> {
  let dir = await openRoot(realRoot);
  try {
    for (const name of parts) {
      const child = await dir.openDir(name);
      await dir.close();
      dir = child;
    }
    return dir;
  } catch {
    await dir.close();
    return undefined;
  }
}

/**
 * `.gitignore` rules of a workspace, as git applies them: each directory's file speaks for the
 * paths below it, deeper files override shallower ones, and `.git` itself is always skipped.
 * Rule files are read through directory descriptors only (see `VerifiedDir`).
 */
export class GitignoreRules {
  private readonly byDir = new Map<string, Promise<Ignore | undefined>>();

  constructor(private readonly realRoot: string) {}

  /** True when `rel` (relative to the root, posix or native separators) is ignored. */
  async ignores(rel: string, isDir: boolean): Promise<boolean> {
    const parts = toPosix(rel).split('/').filter((p) => p !== '' && p !== '.');
    // A path below an ignored directory is ignored whatever deeper rules say (git does not descend).
    for (let i = 1; i < parts.length; i++) {
      if (await this.ignoredHere(parts.slice(0, i), true)) return true;
    }
    return parts.length > 0 && this.ignoredHere(parts, isDir);
  }

  /** Whether the last component of `parts` is ignored by the rules of the directories above it. */
  async ignoredHere(parts: readonly string[], isDir: boolean): Promise<boolean> {
    if (parts[parts.length - 1] === '.git') return true;
    let ignored = false;
    for (let d = 0; d < parts.length; d++) {
      const rules = await this.rulesOf(parts.slice(0, d));
      if (!rules) continue;
      const rel = parts.slice(d).join('/') + (isDir ? '/' : '');
      const r = rules.test(rel);
      if (r.ignored) ignored = true;
      else if (r.unignored) ignored = false;
    }
    return ignored;
  }

  /**
   * The rules of the directory `parts`; read from `dir` (that directory, already open) when
   * given, else by walking from the root descriptor.
   */
  rulesOf(parts: readonly string[], dir?: VerifiedDir): Promise<Ignore | undefined> {
    const key = parts.join('/');
    let rules = this.byDir.get(key);
    if (!rules) {
      const text = dir
        ? readGitignoreIn(dir)
        : openRealDir(this.realRoot, parts).then(async (d) => {
            if (!d) return undefined;
            try {
              return await readGitignoreIn(d);
            } finally {
              await d.close();
            }
          });
      rules = text.then(
        (t) => (t === undefined ? undefined : ignore().add(t)),
        () => undefined,
      );
      this.byDir.set(key, rules);
    }
    return rules;
  }
}

/** A regular file found by `walkFiles`. */
export interface WalkedFile {
  /** The open directory holding it: valid only until the walk moves on (open the file before that). */
  readonly dir: VerifiedDir;
  /** Its name in `dir`. */
  readonly name: string;
  /** Relative to the workspace root, with `/` separators. */
  readonly rel: string;
}

const byName = (a: Dirent, b: Dirent) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Yields the regular files below the open directory `start` (whose path relative to the root is
 * `startRel`) in a stable (sorted) order, skipping what `.gitignore` ignores without descending
 * into ignored directories. Every directory is opened from its parent's descriptor without
 * following symlinks and listed through its own descriptor, so the walk cannot leave the
 * workspace even if names are swapped while it runs. `maxDepth` (1 = only `start`'s own files)
 * stops descending early. `start` stays the caller's to close.
 */
export async function* walkFiles(
  start: VerifiedDir,
  startRel: string,
  rules: GitignoreRules,
  signal?: AbortSignal,
  maxDepth = Number.POSITIVE_INFINITY,
): AsyncGenerator<WalkedFile> {
  const rel = toPosix(startRel);
  const startParts = rel === '' || rel === '.' ? [] : rel.split('/');
  if (startParts.length > 0 && (await rules.ignores(startParts.join('/'), true))) return;
  yield* walkDir(start, startParts, rules, signal, maxDepth);
}

async function* walkDir(dir: VerifiedDir, parts: string[], rules: GitignoreRules, signal: AbortSignal | undefined, depthLeft: number): AsyncGenerator<WalkedFile> {
  signal?.throwIfAborted();
  if (depthLeft < 1) return;
  await rules.rulesOf(parts, dir);
  let entries;
  try {
    entries = await dir.readdir();
  } catch {
    return; // vanished or unreadable: a search reports what it can read
  }
  entries.sort(byName);
  const dirs: string[] = [];
  for (const e of entries) {
    const child = [...parts, e.name];
    if (e.isDirectory()) {
      if (!(await rules.ignoredHere(child, true))) dirs.push(e.name);
    } else if (e.isFile()) {
      if (!(await rules.ignoredHere(child, false))) yield { dir, name: e.name, rel: posix.join(...child) };
    }
  }
  if (depthLeft < 2) return;
  for (const name of dirs) {
    signal?.throwIfAborted();
    let sub: VerifiedDir;
    try {
      sub = await dir.openDir(name); // no-follow: a directory swapped for a symlink is skipped
    } catch {
      continue;
    }
    try {
      yield* walkDir(sub, [...parts, name], rules, signal, depthLeft - 1);
    } finally {
      await sub.close();
    }
  }
}
