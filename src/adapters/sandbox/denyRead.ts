/**
 * What a sandboxed command cannot read (SPEC §10.8): the usual credential places, masked inside
 * the sandbox (an empty read-only tmpfs over a directory, `/dev/null` over a file). Pure: the
 * caller says what kind of thing each path is on the host (`kindOf`).
 *
 * The list is {@link DEFAULT_DENY_READ} (under the home the commands see; `~` is that home),
 * `/etc/shadow`, `/etc/gshadow`, and `/root` when the home is elsewhere; plus the config's
 * `sandbox.denyRead`, less its `sandbox.allowRead` (exact paths, `~/` expanded). Only existing
 * paths are masked. The workspace is never masked, nor any directory that holds it (a
 * workspace under `/root` keeps `/root` visible; its credential directories are still masked).
 */
import { isAbsolute, join, normalize, relative } from 'node:path';

/** Credential places under the home, as `~/…`. */
export const DEFAULT_DENY_READ: readonly string[] = [
  '~/.ssh',
  '~/.aws',
  '~/.gnupg',
  '~/.config/gcloud',
  '~/.azure',
  '~/.kube',
  '~/.docker/config.json',
  '~/.netrc',
  '~/.npmrc',
  '~/.yarnrc.yml',
  '~/.pypirc',
  '~/.git-credentials',
  '~/.config/git/credentials',
  '~/.config/gh',
  '~/.config/hub',
  '~/.cargo/credentials',
  '~/.cargo/credentials.toml',
  '~/.gem/credentials',
  '~/.pgpass',
  '~/.my.cnf',
  '~/.vault-token',
  '~/.terraform.d/credentials.tfrc.json',
  '~/.password-store',
  '~/.local/share/keyrings',
  // Directories that hold sockets which answer for the user (a docker socket is root on the host).
  '~/.docker/desktop',
  '~/.docker/run',
  '~/.colima',
  '~/.lima',
  '~/.rd',
  '~/.1password',
];

/** Files of the host that hold password hashes. */
export const HOST_DENY_READ: readonly string[] = ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-'];

export interface DenyReadInput {
  /** The home the commands see (absolute). */
  readonly home: string;
  /** The workspace root (absolute, resolved): never masked, nor what holds it. */
  readonly root: string;
  /** More paths to mask (`~/…` or absolute). */
  readonly deny?: readonly string[];
  /** Paths taken off the list (`~/…` or absolute, exact). */
  readonly allow?: readonly string[];
  /** What the path is on the host (following symlinks); `missing` is not masked. */
  readonly kindOf: (path: string) => 'dir' | 'file' | 'missing';
}

/** What the sandbox hides from a command: directories covered by an empty tmpfs, files covered by an empty file. */
export interface DenyReadPlan {
  /** Directories to cover with an empty read-only tmpfs. */
  readonly dirs: readonly string[];
  /** Files to cover with `/dev/null`. */
  readonly files: readonly string[];
}

/** `~/x` under `home`; an absolute path normalised; undefined for anything else. */
export function expandHome(path: string, home: string): string | undefined {
  if (path === '~') return normalize(home);
  if (path.startsWith('~/')) return normalize(join(home, path.slice(2)));
  return isAbsolute(path) ? normalize(path) : undefined;
}

const holds = (dir: string, path: string) => {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/** The paths to mask, by kind (see the module note). */
export function denyReadPlan(input: DenyReadInput): DenyReadPlan {
  const home = normalize(input.home);
  const wanted = [...DEFAULT_DENY_READ, ...HOST_DENY_READ, ...(home !== '/root' ? ['/root'] : []), ...(input.deny ?? [])];
  const allow = new Set((input.allow ?? []).map((p) => expandHome(p, home)).filter((p): p is string => p !== undefined));
  const dirs: string[] = [];
  const files: string[] = [];
  const seen = new Set<string>();
  for (const raw of wanted) {
    const p = expandHome(raw, home);
    if (p === undefined || p === '/' || seen.has(p) || allow.has(p)) continue;
    seen.add(p);
    if (holds(p, input.root)) continue;
    const kind = input.kindOf(p);
    if (kind === 'dir') dirs.push(p);
    else if (kind === 'file') files.push(p);
  }
  // Parents before children: a mask over a directory first, then any inside it is a no-op mount
  // on the empty tmpfs (which bubblewrap would fail to make), so children of a masked dir go.
  dirs.sort((a, b) => a.length - b.length);
  const keptDirs = dirs.filter((d, i) => !dirs.slice(0, i).some((o) => holds(o, d)));
  const keptFiles = files.filter((f) => !keptDirs.some((d) => holds(d, f)));
  return { dirs: keptDirs, files: keptFiles };
}
