/**
 * What governs the agent, as paths no tool call may change (SPEC §10.3): the session state under
 * `.dsh/` (logs, leases, checkpoints, spills), the project's `dsh.config.json`, the user-level
 * config directory, and the two parts of `.git` that run code later, outside any sandbox
 * (`.git/hooks`, and `.git/config`, whose `core.hooksPath`, `core.fsmonitor`, filters and aliases
 * name programs). The rest of `.git` stays writable: objects, refs and the index are what `git`
 * commands in the workspace are for, and none of them makes git run a program.
 *
 * A pure function of the workspace root and the user config directory, both absolute and already
 * resolved (symlinks followed): the file tools compare descriptor-verified real paths against it,
 * and the bash sandbox binds the same paths read-only. Reading them stays allowed.
 */
import { isAbsolute, join, relative, sep } from 'node:path';

/** One protected path and the rule that protects it (named in the refusal). */
export interface ProtectedPath {
  /** Absolute, resolved. */
  readonly path: string;
  /** `tree`: the path and everything below it; `file`: the path itself. */
  readonly kind: 'tree' | 'file';
  /** What it is and why it is protected, for the message of an `FS_PROTECTED` refusal. */
  readonly rule: string;
}

export interface ProtectedPathsInput {
  /** The workspace root (absolute, resolved). */
  readonly workspaceRoot: string;
  /** The user-level dsh config directory, `$XDG_CONFIG_HOME/dsh` (absolute, resolved). */
  readonly userConfigDir: string;
}

/** The protected paths of one workspace and user (see the module comment). */
export function protectedPaths(input: ProtectedPathsInput): readonly ProtectedPath[] {
  const { workspaceRoot: root, userConfigDir } = input;
  return Object.freeze([
    { path: join(root, '.dsh'), kind: 'tree', rule: "dsh's session state (.dsh/: session logs, leases, checkpoints) is the record of this agent's work" },
    { path: join(root, 'dsh.config.json'), kind: 'file', rule: "the project's dsh.config.json holds the rules that govern this agent" },
    { path: userConfigDir, kind: 'tree', rule: `the user-level dsh config (${userConfigDir}) holds the rules that govern this agent` },
    { path: join(root, '.git', 'hooks'), kind: 'tree', rule: '.git/hooks holds programs git runs later, outside any sandbox' },
    { path: join(root, '.git', 'config'), kind: 'file', rule: ".git/config names programs git runs later (hooksPath, fsmonitor, filters), outside any sandbox" },
  ] satisfies ProtectedPath[]).map((p) => Object.freeze(p));
}

const isAtOrBelow = (dir: string, path: string) => {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
};

/** The protected path `path` (absolute, resolved) falls under, if any. */
export function protectionOf(list: readonly ProtectedPath[], path: string): ProtectedPath | undefined {
  return list.find((p) => (p.kind === 'tree' ? isAtOrBelow(p.path, path) : p.path === path));
}

/**
 * The user-level dsh config directory as dsh's config loader finds it: `$XDG_CONFIG_HOME/dsh`, or
 * `<home>/.config/dsh` when XDG_CONFIG_HOME is unset, empty or relative. Not resolved.
 */
export function userConfigDirOf(env: Readonly<Record<string, string | undefined>>, home: string): string {
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(env.HOME || home, '.config'), 'dsh');
}
