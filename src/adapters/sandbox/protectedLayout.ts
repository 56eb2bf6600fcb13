/**
 * How the protected paths under the workspace are held inside the sandbox, found by looking at
 * the file system just before a command runs, and the sweep just after it.
 *
 * An existing protected path is bound read-only, and every directory between the root and it is
 * bound onto itself: a mount point cannot be renamed or removed, so `mv .git .git-old`, `rm -r
 * .dsh` and `mv dsh.config.json x` fail, and nothing can be put in their place. A protected path
 * that does not exist cannot be bound (a bind needs something to bind onto, and making it would
 * change the workspace): the command could create it. So the sweep looks again once the
 * command and everything it started are gone, and moves whatever was created there into
 * `.dsh/quarantine/` (nothing is deleted): a `dsh.config.json`, or a `.git` of any kind (a
 * directory made by `git init`, or a file or symlink that could point git anywhere): a
 * repository the command made would hold hooks and config the host's git runs later.
 */
import { lstat, mkdir, rename } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { DSH_STATE_DIR, type ProtectedPath } from './protectedPaths.js';

export interface ProtectedLayout {
  readonly pin: readonly string[];
  readonly readOnly: readonly string[];
  /** Protected paths under the root that do not exist yet (or sit under a non-directory). */
  readonly absent: readonly ProtectedPath[];
}

type Kind = 'dir' | 'other' | 'missing';

async function kindOf(path: string): Promise<Kind> {
  try {
    return (await lstat(path)).isDirectory() ? 'dir' : 'other';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return 'missing';
    throw e;
  }
}

/** The components from just under `root` down to `path`, as absolute paths. */
function steps(root: string, path: string): string[] {
  const parts = relative(root, path).split(sep);
  return parts.map((_, i) => join(root, ...parts.slice(0, i + 1)));
}

const isUnder = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep);
};

/** Looks at each protected path under `root` (paths elsewhere are read-only or invisible already). */
export async function protectedLayout(root: string, list: readonly ProtectedPath[]): Promise<ProtectedLayout> {
  const pin = new Set<string>();
  const readOnly = new Set<string>();
  const absent: ProtectedPath[] = [];
  for (const p of list) {
    if (!isUnder(root, p.path)) continue;
    const chain = steps(root, p.path);
    for (let i = 0; i < chain.length; i++) {
      const step = chain[i]!;
      const last = i === chain.length - 1;
      const kind = await kindOf(step);
      if (kind === 'missing') {
        absent.push(p);
        break;
      }
      if (last || kind === 'other') {
        // The path itself, or a file or symlink in its place on the way (a `.git` file names
        // the git directory): held read-only, so it cannot be rewritten or replaced.
        readOnly.add(step);
        break;
      }
      pin.add(step);
    }
  }
  // A read-only path needs no pin of its own; pins come parents first.
  const pins = [...pin].filter((d) => !readOnly.has(d)).sort((a, b) => a.length - b.length);
  return { pin: pins, readOnly: [...readOnly], absent };
}

/** Something a command created at a protected path, moved into `.dsh/quarantine/`. */
export interface Quarantined {
  readonly rule: ProtectedPath['rule'];
  /** Where it was, relative to the root. */
  readonly path: string;
  /** Where it is now, relative to the root. */
  readonly movedTo: string;
}

/**
 * After a command: moves whatever it created at an absent protected path (or in the way of one)
 * into `<root>/.dsh/quarantine/`. Walks by `lstat` and never follows a link.
 */
export async function sweepProtected(root: string, absent: readonly ProtectedPath[], now: () => Date = () => new Date()): Promise<Quarantined[]> {
  const moved: Quarantined[] = [];
  const quarantine = join(root, DSH_STATE_DIR, 'quarantine');
  const move = async (p: ProtectedPath, step: string) => {
    await mkdir(quarantine, { recursive: true });
    const stamp = now().toISOString().replace(/[:.]/g, '-');
    const target = join(quarantine, `${stamp}-${p.rule}-${basename(step)}-${Math.random().toString(36).slice(2, 8)}`);
    await rename(step, target);
    moved.push({ rule: p.rule, path: relative(root, step), movedTo: relative(root, target) });
  };
  for (const p of absent) {
    // The quarantine lives in `.dsh`, which the sandbox makes before the command runs.
    if (p.rule === 'dsh-state') continue;
    const chain = steps(root, p.path);
    for (let i = 0; i < chain.length; i++) {
      const step = chain[i]!;
      const kind = await kindOf(step);
      if (kind === 'missing') break;
      if (i === chain.length - 1 || kind === 'other') {
        await move(p, step);
        break;
      }
    }
  }
  return moved;
}
