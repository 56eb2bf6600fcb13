/**
 * A model's path argument, made comparable with workspace-relative globs. The argument is hostile:
 * `a/../../etc`, `/abs/path`, `./x//y`, `secrets/./key` must all land on one canonical spelling
 * before a glob sees them, or `deny secrets/**` is dodged by `./secrets/key` or `x/../secrets/key`.
 * Pure string work (POSIX paths, browser-safe): symlinks are not resolved here, which is why the
 * file tools' sandbox still enforces the root on the real file system.
 */

/** Where a path argument points, lexically. */
export type ToolPath =
  | { readonly inside: true; /** Relative to the root, `/`-separated, no `.`/`..`/empty segments; `.` for the root itself. */ readonly rel: string }
  | { readonly inside: false };

function segments(path: string): string[] | undefined {
  const out: string[] = [];
  for (const s of path.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') {
      if (out.length === 0) return undefined; // climbs above where it started
      out.pop();
    } else out.push(s);
  }
  return out;
}

/**
 * Normalises `raw` against the workspace `root` (an absolute POSIX path). A relative path is
 * taken from the root; an absolute one counts as inside only under `root`; a path that climbs
 * out (`..` past the root), an absolute path elsewhere, a path with a NUL byte or a non-string is
 * `{ inside: false }`.
 */
export function normaliseToolPath(raw: unknown, root?: string): ToolPath {
  if (typeof raw !== 'string' || raw.includes('\0')) return { inside: false };
  let rel = raw;
  if (raw.startsWith('/')) {
    const rootSegs = root === undefined ? undefined : segments(root);
    const pathSegs = segments(raw);
    if (!rootSegs || !pathSegs) return { inside: false };
    // A path shorter than the root differs from it where it ends (`undefined` is no segment).
    for (let i = 0; i < rootSegs.length; i++) if (rootSegs[i] !== pathSegs[i]) return { inside: false };
    rel = pathSegs.slice(rootSegs.length).join('/');
  }
  const segs = segments(rel);
  if (!segs) return { inside: false };
  return { inside: true, rel: segs.length === 0 ? '.' : segs.join('/') };
}
