/**
 * The bubblewrap command line for one sandboxed command. Pure: the caller has looked at the file
 * system (which protected paths exist) and made the private temporary directory.
 *
 * The sandbox sees the host's file system read-only (`--ro-bind / /`), with fresh `/dev` and
 * `/proc` (its own PID namespace: no other process's environment or command line is visible),
 * an empty `/run` (no host sockets: docker, dbus, ssh-agent, postgres), the private temporary
 * directory at `/tmp`, and, in `workspace-write`, the workspace bound writable. Over that:
 * every directory between the root and an existing protected path is bound onto itself (a mount
 * point cannot be renamed or removed, so `mv .git .git-old && mkdir .git` fails), and every
 * existing protected path is bound read-only. Last, what no command may read (denyRead.ts) is
 * covered: an empty read-only tmpfs over a directory, `/dev/null` over a file. All namespaces are new (user, PID, IPC, UTS,
 * cgroup, and network unless allowed); no capability is kept; no further user namespace can be
 * made inside; the command leads a new session (no terminal to inject into).
 */
export type SandboxMode = 'read-only' | 'workspace-write' | 'full-access';

/** Every sandbox mode, strictest first. */
export const SANDBOX_MODES: readonly SandboxMode[] = ['read-only', 'workspace-write', 'full-access'];

export interface BwrapPlan {
  readonly mode: 'read-only' | 'workspace-write';
  /** The workspace root, symlinks resolved. */
  readonly root: string;
  /** The directory the command starts in (inside the root). */
  readonly cwd: string;
  /** The host directory seen as `/tmp` inside. */
  readonly tmpDir: string;
  readonly network: boolean;
  /** Directories to bind onto themselves, parents first (pins them against rename and removal). */
  readonly pin: readonly string[];
  /** Existing protected paths, bound read-only (after the pins). */
  readonly readOnly: readonly string[];
  /**
   * Whether the command is the sandbox's pid 1 (`--as-pid-1`: the caller brings an init that
   * reaps and takes the namespace down, as `bash` does); else bubblewrap's own init is.
   */
  readonly asPid1: boolean;
  /** Fd that bubblewrap writes its JSON info to (`child-pid`: the host pid of the sandbox's pid 1). */
  readonly infoFd?: number;
  /** Whether `--unshare-user --disable-userns` works here (see probe); else `--unshare-user-try`. */
  readonly userns: boolean;
  /** Directories no command may read: each covered by an empty read-only tmpfs (after the binds). */
  readonly hideDirs?: readonly string[];
  /** Files no command may read: each covered by `/dev/null` (after the binds). */
  readonly hideFiles?: readonly string[];
  /** An fd of the spawned process holding a seccomp filter (unixSocketFilter.ts) for `--seccomp`. */
  readonly seccompFd?: number;
  /** Files shown with another file's content (read-only), after the binds: `{ path, with }`. */
  readonly coverFiles?: readonly { readonly path: string; readonly with: string }[];
}

/** The argv after `bwrap`, ending with `--` (the command follows). */
export function bwrapArgs(plan: BwrapPlan): string[] {
  const a: string[] = ['--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  if (plan.userns) a.push('--unshare-user', '--disable-userns');
  else a.push('--unshare-user-try');
  a.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  if (!plan.network) a.push('--unshare-net');
  if (plan.asPid1) a.push('--as-pid-1');
  if (plan.infoFd !== undefined) a.push('--info-fd', String(plan.infoFd));
  a.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/run');
  // With the network on, name resolution may go through a resolver socket under /run.
  if (plan.network) a.push('--ro-bind-try', '/run/systemd/resolve', '/run/systemd/resolve');
  a.push('--bind', plan.tmpDir, '/tmp');
  a.push(plan.mode === 'workspace-write' ? '--bind' : '--ro-bind', plan.root, plan.root);
  if (plan.mode === 'workspace-write') {
    for (const d of plan.pin) a.push('--bind', d, d);
    for (const p of plan.readOnly) a.push('--ro-bind', p, p);
  }
  for (const d of plan.hideDirs ?? []) a.push('--tmpfs', d, '--remount-ro', d);
  for (const f of plan.hideFiles ?? []) a.push('--ro-bind', '/dev/null', f);
  for (const c of plan.coverFiles ?? []) a.push('--ro-bind', c.with, c.path);
  if (plan.seccompFd !== undefined) a.push('--seccomp', String(plan.seccompFd));
  a.push('--chdir', plan.cwd, '--');
  return a;
}
