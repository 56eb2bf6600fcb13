/**
 * The paths that govern the agent (SPEC §10.3): no tool call may change them, whatever the tool
 * (file tools refuse them; inside the OS sandbox they are read-only). One list, shared by the file
 * tools' guard, the bash sandbox and MCP servers run in the sandbox.
 *
 * Pure: a function of the workspace root and the user-level config directory (no file system
 * access). Pass the root with symlinks resolved, as every sandbox check does.
 */
import { isAbsolute, join } from 'node:path';

/** Names a rule, for the error a refusal carries (`FS_PROTECTED: … (rule dsh-state)`). */
export type ProtectedRule = 'dsh-state' | 'project-config' | 'user-config' | 'git-dir';

/** A path the agent may not write (git metadata, configs, dsh state), with its rule and why. */
export interface ProtectedPath {
  /** Absolute path. Everything under it is protected too. */
  readonly path: string;
  /** What it is when it exists. */
  readonly kind: 'dir' | 'file';
  readonly rule: ProtectedRule;
  /** Why, in a few words (for messages and docs). */
  readonly reason: string;
}

/** Where the protected paths are: the workspace root, the user config directory, the git directories. */
export interface ProtectedPathsOptions {
  /** The workspace root (absolute, symlinks resolved). */
  readonly root: string;
  /** The user-level config directory (see {@link userConfigDir}); omit to leave it out. */
  readonly userConfigDir?: string;
  /**
   * Git directories found through a `.git` file (its `gitdir:` and that directory's `commondir`),
   * absolute and resolved (see gitPointers.ts); each is protected as a whole, like `<root>/.git`.
   */
  readonly gitDirs?: readonly string[];
  /**
   * The `.git` files of the checkouts those git directories manage inside the workspace
   * (submodules, linked worktrees; see gitPointers.ts), absolute: each protected as a file.
   */
  readonly gitFiles?: readonly string[];
}

/** The project's state directory: session logs, leases, checkpoints, spills. */
export const DSH_STATE_DIR = '.dsh';
/** The project config file, which holds the permission rules. */
export const PROJECT_CONFIG_NAME = 'dsh.config.json';

/**
 * The protected paths of a workspace, parents before children:
 * - `<root>/.dsh/` (logs, leases, checkpoints: the log is the truth);
 * - `<root>/dsh.config.json` (the rules);
 * - the user-level config directory (`$XDG_CONFIG_HOME/dsh`, the user's rules);
 * - `<root>/.git` as a whole, and the git directories a `.git` file points at (`gitDirs`): git
 *   runs what they hold later, on the host, outside any sandbox: `hooks/`, `config`
 *   (`core.fsmonitor`, `core.hooksPath`, aliases, filters), `commondir` (which names another
 *   directory's config and hooks), `worktrees/*` and `modules/*` (each with its own hooks and
 *   config), `info/attributes` (filters). A narrower list misses the next pointer; the cost is
 *   that a command cannot commit, branch or fetch (the user does, outside dsh);
 * - the `.git` files of the submodules and linked worktrees those directories manage inside the
 *   workspace (`gitFiles`): the host's `git status` follows a submodule's `.git` file.
 */
export function protectedPaths(options: ProtectedPathsOptions): readonly ProtectedPath[] {
  const { root } = options;
  if (!isAbsolute(root)) throw new TypeError(`protectedPaths: the root must be absolute, got ${JSON.stringify(root)}`);
  const list: ProtectedPath[] = [
    { path: join(root, DSH_STATE_DIR), kind: 'dir', rule: 'dsh-state', reason: "dsh's session logs, leases and checkpoints" },
    { path: join(root, PROJECT_CONFIG_NAME), kind: 'file', rule: 'project-config', reason: "the project's dsh rules" },
  ];
  if (options.userConfigDir !== undefined) {
    if (!isAbsolute(options.userConfigDir)) throw new TypeError(`protectedPaths: the user config dir must be absolute, got ${JSON.stringify(options.userConfigDir)}`);
    list.push({ path: options.userConfigDir, kind: 'dir', rule: 'user-config', reason: "the user's dsh config" });
  }
  const GIT_REASON = 'git runs what its directory holds later, outside any sandbox (hooks, config, commondir, worktrees, modules, attributes)';
  list.push({ path: join(root, '.git'), kind: 'dir', rule: 'git-dir', reason: GIT_REASON });
  for (const d of options.gitDirs ?? []) {
    if (!isAbsolute(d)) throw new TypeError(`protectedPaths: a git dir must be absolute, got ${JSON.stringify(d)}`);
    if (!list.some((p) => p.path === d)) list.push({ path: d, kind: 'dir', rule: 'git-dir', reason: GIT_REASON });
  }
  for (const f of options.gitFiles ?? []) {
    if (!isAbsolute(f)) throw new TypeError(`protectedPaths: a git file must be absolute, got ${JSON.stringify(f)}`);
    if (!list.some((p) => p.path === f)) list.push({ path: f, kind: 'file', rule: 'git-dir', reason: "a submodule's or worktree's .git file names the git directory git runs from" });
  }
  return list;
}

/**
 * The user-level config directory as the config loader finds it: `$XDG_CONFIG_HOME/dsh`, or
 * `<home>/.config/dsh` when XDG_CONFIG_HOME is unset, empty or relative. Pure.
 */
export function userConfigDir(env: Readonly<Record<string, string | undefined>>, home: string): string {
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(home, '.config'), 'dsh');
}

/** The protected path `target` (absolute, resolved) is, or lies under; undefined if none. */
export function protectedBy(list: readonly ProtectedPath[], target: string): ProtectedPath | undefined {
  return list.find((p) => target === p.path || target.startsWith(p.path.endsWith('/') ? p.path : `${p.path}/`));
}
