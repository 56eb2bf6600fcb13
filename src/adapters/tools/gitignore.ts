import { readFile, readdir } from 'node:fs/promises';
import { join, posix, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';

const toPosix = (p: string) => (sep === '/' ? p : p.split(sep).join('/'));

/**
 * `.gitignore` rules of a workspace, as git applies them: each directory's file speaks for the
 * paths below it, deeper files override shallower ones, and `.git` itself is always skipped.
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
      const rules = await this.rulesOf(parts.slice(0, d).join('/'));
      if (!rules) continue;
      const rel = parts.slice(d).join('/') + (isDir ? '/' : '');
      const r = rules.test(rel);
      if (r.ignored) ignored = true;
      else if (r.unignored) ignored = false;
    }
    return ignored;
  }

  private rulesOf(dirRel: string): Promise<Ignore | undefined> {
    let rules = this.byDir.get(dirRel);
    if (!rules) {
      rules = readFile(join(this.realRoot, ...dirRel.split('/').filter(Boolean), '.gitignore'), 'utf8').then(
        (text) => ignore().add(text),
        () => undefined,
      );
      this.byDir.set(dirRel, rules);
    }
    return rules;
  }
}

/** A regular file found by `walkFiles`. */
export interface WalkedFile {
  readonly real: string;
  /** Relative to the workspace root, with `/` separators. */
  readonly rel: string;
}

/**
 * Yields the regular files under `startReal` in a stable (sorted) order, skipping what
 * `.gitignore` ignores without descending into ignored directories. Symlinks are not followed,
 * so the walk cannot leave the workspace.
 */
export async function* walkFiles(realRoot: string, startReal: string, rules: GitignoreRules, signal?: AbortSignal): AsyncGenerator<WalkedFile> {
  const startRel = toPosix(relative(realRoot, startReal));
  const startParts = startRel === '' ? [] : startRel.split('/');
  if (startParts.length > 0 && (await rules.ignores(startRel, true))) return;
  const stack: string[][] = [startParts];
  while (stack.length) {
    signal?.throwIfAborted();
    const parts = stack.pop()!;
    let entries;
    try {
      entries = await readdir(join(realRoot, ...parts), { withFileTypes: true });
    } catch {
      continue; // vanished or unreadable: a search reports what it can read
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const dirs: string[][] = [];
    for (const e of entries) {
      const child = [...parts, e.name];
      if (e.isDirectory()) {
        if (!(await rules.ignoredHere(child, true))) dirs.push(child);
      } else if (e.isFile()) {
        if (!(await rules.ignoredHere(child, false))) yield { real: join(realRoot, ...child), rel: posix.join(...child) };
      }
    }
    // Reversed onto the stack so directories are visited in sorted order, depth first.
    for (let i = dirs.length - 1; i >= 0; i--) stack.push(dirs[i]!);
  }
}
