/**
 * The OS sandbox for commands (SPEC §10.2): `bash` runs every call in one, and MCP stdio servers
 * can run in one. One sandbox per workspace (per session): it owns a private temporary directory,
 * seen as `/tmp` (and `TMPDIR`) by every command it wraps, removed by `dispose()` or when this
 * process exits.
 *
 * Modes:
 * - `workspace-write` (default): the host's files read-only, except the workspace and the private
 *   tmp; the protected paths (protectedPaths.ts) read-only inside the workspace too.
 * - `read-only`: the workspace read-only as well; only the private tmp is writable.
 * - `full-access`: no file or network confinement at all (explicit choice only); the environment
 *   is still an allowlist (commandEnv.ts).
 * In the first two, no network unless `network: true`, no host sockets (`/run` is empty, `/tmp` is
 * private, and no Unix socket can be made: unixSocketFilter.ts), no other process is visible, and
 * the usual credential files are masked (denyRead.ts). Built on bubblewrap (see bwrapArgs.ts).
 */
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { bwrapArgs, type SandboxMode } from './bwrapArgs.js';
import { bwrapSupport, type BwrapProbe } from './bwrapProbe.js';
import { commandEnv, shellLevel } from './commandEnv.js';
import { protectedLayout, sweepProtected, type Quarantined } from './protectedLayout.js';
import { denyReadPlan, type DenyReadPlan } from './denyRead.js';
import { gitLocations } from './gitPointers.js';
import { unixSocketFilterFile } from './unixSocketFilter.js';
import { DSH_STATE_DIR, protectedPaths, userConfigDir, type ProtectedPath } from './protectedPaths.js';

export { SANDBOX_MODES, type SandboxMode } from './bwrapArgs.js';
export type { Quarantined } from './protectedLayout.js';

/** The sandbox of a workspace: its mode, network, and what else it hides or allows. */
export interface SandboxOptions {
  /** Default `workspace-write`. */
  readonly mode?: SandboxMode;
  /** The workspace root. */
  readonly root: string;
  /** Let commands reach the network (default false: a network namespace with only loopback, and nothing listens there). */
  readonly network?: boolean;
  /** The environment commands take their allowlisted names from (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Names passed to commands on top of the allowlist (commandEnv.ts): `NPM_TOKEN`, `HTTPS_PROXY`, … */
  readonly passEnv?: readonly string[];
  /** The user-level config dir to protect (default `$XDG_CONFIG_HOME/dsh` or `~/.config/dsh`). */
  readonly userConfigDir?: string;
  /**
   * More paths no command may read (`~/…` or absolute), on top of the credential places masked by
   * default (denyRead.ts: `~/.ssh`, `~/.aws`, `/etc/shadow`, …).
   */
  readonly denyRead?: readonly string[];
  /** Paths taken off the deny-read list (exact, `~/…` or absolute): e.g. `~/.npmrc` for `npm publish`. */
  readonly allowRead?: readonly string[];
  /**
   * Let commands make Unix sockets (default false: `socket(AF_UNIX, …)` fails with EACCES, so no
   * host socket answers, wherever it lies; unixSocketFilter.ts). `socketpair` works either way.
   */
  readonly unixSockets?: boolean;
  /** The bubblewrap binary (default `bwrap` on PATH). */
  readonly bwrap?: string;
  /** How bubblewrap support is found (default: probed once per process). */
  readonly probe?: () => Promise<BwrapProbe>;
}

/** The sandbox cannot be made here; `reason` says why. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** How one command is wrapped: where it starts, and what more it may not see. */
export interface WrapOptions {
  /** Where the command starts (default the root; must lie inside it). */
  readonly cwd?: string;
  /** The command is the sandbox's pid 1 and brings its own init (as `bash` does). Default false. */
  readonly asPid1?: boolean;
  /** Ask bubblewrap to write its JSON info (`child-pid`) to this fd of the spawned process. */
  readonly infoFd?: number;
  /** More directories this command may not see, each covered by an empty tmpfs (a hook's `node_modules` on the way up). */
  readonly hideDirs?: readonly string[];
  /** Files this command sees with another file's content, read-only (a hook's `package.json` on the way up). */
  readonly coverFiles?: readonly { readonly path: string; readonly with: string }[];
}

/** A command wrapped for the sandbox: what to spawn, and `finish()` to call when it is gone. */
export interface SandboxedCommand {
  /** What to spawn: `file` with `args` (the command comes last), in `cwd`, with exactly `env`. */
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
  /** Whether bubblewrap wraps it (false in `full-access`). */
  readonly confined: boolean;
  /**
   * Call once the command and everything it started are gone: moves what it created at a
   * protected path into `.dsh/quarantine/` and says what (empty in `full-access` and `read-only`).
   */
  finish(): Promise<readonly Quarantined[]>;
}

/** The OS sandbox of one workspace: wraps commands (`bash`, command hooks, stdio MCP servers) in bubblewrap. */
export interface Sandbox {
  readonly mode: SandboxMode;
  readonly network: boolean;
  /** The deny-read list the next command gets (denyRead.ts), for `dsh run` and docs. */
  denied(): Promise<DenyReadPlan>;
  /** The protected paths this sandbox holds read-only. */
  readonly protected: readonly ProtectedPath[];
  /** Whether the sandbox can be made here (`full-access` always can). */
  check(): Promise<{ ok: true } | { ok: false; reason: string }>;
  /** Wraps `argv` (an absolute program and its arguments); throws {@link SandboxUnavailableError}. */
  wrap(argv: readonly string[], options?: WrapOptions): Promise<SandboxedCommand>;
  /** One line for `dsh run` to print: the mode in force and what it means. */
  describe(): string;
  /** Removes the private temporary directory. */
  dispose(): Promise<void>;
}

const liveTmpDirs = new Set<string>();
let exitHook = false;
function removeAtExit(dir: string): void {
  liveTmpDirs.add(dir);
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const d of liveTmpDirs) rmSync(d, { recursive: true, force: true });
  });
}

/** One line saying what `mode` (with `network`) confines. */
export function describeSandbox(mode: SandboxMode, network: boolean): string {
  if (mode === 'full-access') return 'sandbox: full-access (commands run with your full rights: no file or network confinement, credential files readable; environment allowlisted)';
  const net = network ? 'network allowed' : 'no network';
  const writes = mode === 'read-only' ? 'no writes except a private /tmp' : 'writes only in the workspace and a private /tmp; .dsh, dsh.config.json and .git read-only';
  return `sandbox: ${mode} (bubblewrap): ${writes}; ${net}; secrets withheld (environment allowlisted, credential files hidden)`;
}

/** The sandbox of a workspace (bubblewrap, probed on first use; `SandboxUnavailableError` where it cannot run). */
export function createSandbox(options: SandboxOptions): Sandbox {
  const mode = options.mode ?? 'workspace-write';
  const network = options.network === true;
  const env = options.env ?? process.env;
  const probe = options.probe ?? (() => bwrapSupport(options.bwrap));
  const configDir = options.userConfigDir ?? userConfigDir(env, env.HOME || homedir());
  let realRootP: Promise<string> | undefined;
  const realRoot = () => (realRootP ??= realpath(options.root));
  let tmpDirP: Promise<string> | undefined;
  let list: readonly ProtectedPath[] = protectedPaths({ root: options.root, userConfigDir: configDir });

  const privateTmp = () =>
    (tmpDirP ??= mkdtemp(join(tmpdir(), 'dsh-sandbox-tmp-')).then((d) => {
      removeAtExit(d);
      return d;
    }));

  const kindOf = (path: string): 'dir' | 'file' | 'missing' => {
    try {
      return statSync(path).isDirectory() ? 'dir' : 'file';
    } catch {
      return 'missing';
    }
  };
  const denied = async (): Promise<DenyReadPlan> =>
    denyReadPlan({ home: env.HOME || homedir(), root: await realRoot(), deny: options.denyRead ?? [], allow: options.allowRead ?? [], kindOf });

  const check = async (): Promise<{ ok: true } | { ok: false; reason: string }> => {
    if (mode === 'full-access') return { ok: true };
    const p = await probe();
    return p.ok ? { ok: true } : { ok: false, reason: p.reason };
  };

  return {
    mode,
    network,
    get protected() {
      return list;
    },
    check,
    denied,
    describe: () => describeSandbox(mode, network),
    async wrap(argv, wrapOptions = {}) {
      if (argv.length === 0) throw new TypeError('sandbox.wrap: empty argv');
      const root = await realRoot();
      list = protectedPaths({ root, userConfigDir: configDir, ...gitLocations(root) });
      const cwd = wrapOptions.cwd ?? root;
      if (mode === 'full-access') {
        const { env: e } = commandEnv(env, { passThrough: options.passEnv, set: { SHLVL: shellLevel(env) } });
        return { file: argv[0]!, args: argv.slice(1), env: e, cwd, confined: false, finish: async () => [] };
      }
      const p = await probe();
      if (!p.ok) throw new SandboxUnavailableError(p.reason);
      const tmpDir = await privateTmp();
      // `.dsh` is dsh's own: made now so that it is held read-only from the first command on.
      if (mode === 'workspace-write') await mkdir(join(root, DSH_STATE_DIR), { recursive: true });
      const layout = mode === 'workspace-write' ? await protectedLayout(root, list) : { pin: [], readOnly: [], absent: [] };
      const hidden = await denied();
      const filter = p.seccomp === true && options.unixSockets !== true ? unixSocketFilterFile() : undefined;
      const args = bwrapArgs({
        mode,
        root,
        cwd,
        tmpDir,
        network,
        pin: layout.pin,
        readOnly: layout.readOnly,
        asPid1: wrapOptions.asPid1 === true,
        ...(wrapOptions.infoFd !== undefined ? { infoFd: wrapOptions.infoFd } : {}),
        userns: p.userns,
        hideDirs: [...hidden.dirs, ...(wrapOptions.hideDirs ?? [])],
        hideFiles: hidden.files,
        coverFiles: wrapOptions.coverFiles ?? [],
        ...(filter !== undefined ? { seccompFd: 9 } : {}),
      });
      const { env: e } = commandEnv(env, { passThrough: options.passEnv, set: { TMPDIR: '/tmp', SHLVL: shellLevel(env) } });
      // The filter reaches bubblewrap as fd 9, opened by a shell that then becomes bubblewrap.
      const launch = filter !== undefined ? { file: '/bin/sh', pre: ['-c', 'exec "$@" 9<"$0"', filter, p.bwrap] } : { file: p.bwrap, pre: [] };
      return {
        file: launch.file,
        args: [...launch.pre, ...args, ...argv],
        env: e,
        cwd,
        confined: true,
        finish: () => (layout.absent.length > 0 ? sweepProtected(root, layout.absent) : Promise.resolve([])),
      };
    },
    async dispose() {
      const d = tmpDirP ? await tmpDirP.catch(() => undefined) : undefined;
      tmpDirP = undefined;
      if (d === undefined) return;
      liveTmpDirs.delete(d);
      await rm(d, { recursive: true, force: true });
    },
  };
}
