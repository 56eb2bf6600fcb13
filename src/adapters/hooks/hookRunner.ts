/**
 * The {@link HookRunner} of command hooks on Node: each run is one process in the sandbox `bash`
 * uses (SPEC §10.2): the same mode, network setting and private `/tmp`, dsh's secrets withheld
 * from its environment, and a PID namespace that dies with it, so no process the hook starts
 * outlives it (a timeout kills the whole tree). The call's JSON goes to its stdin.
 *
 * A program with a `/` in it (`.dsh/hooks/check.sh`, `./tools/x`) is taken from the workspace root;
 * a bare name (`node`, `jq`) is looked up on PATH.
 */
import { realpath } from 'node:fs/promises';
import { existsSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import type { HookRunner, HookRunOutcome } from '../../runtime/policies/commandHooks.js';
import { SandboxUnavailableError, type Sandbox } from '../sandbox/sandbox.js';
import { gitPointerDirs } from '../sandbox/gitPointers.js';
import { protectedBy, protectedPaths } from '../sandbox/protectedPaths.js';
import { initArgv, runIsolated, type Isolation } from '../tools/isolatedProcess.js';
import { pidNamespaceSupport, type PidNamespaceProbe } from '../tools/pidNamespace.js';
import type { BashIsolation } from '../tools/bash.js';

export interface HookRunnerOptions {
  /** The workspace root: the hooks' working directory, and where relative programs are found. */
  readonly root: string;
  /** The sandbox of the session's `bash` (`createBuiltinTools(...).sandbox`). */
  readonly sandbox: Sandbox;
  /** In `full-access` (no sandbox), how the hook's processes are bounded (default `pid-namespace`, as `bash`). */
  readonly isolation?: BashIsolation;
  /** How `pid-namespace` support is found (default: probed once per process). */
  readonly probePidNamespace?: () => Promise<PidNamespaceProbe>;
  /** After SIGTERM at the deadline, how long before SIGKILL (default 500 ms). */
  readonly killGraceMs?: number;
  /** Most bytes of stdout + stderr kept (default 4 MiB). */
  readonly maxOutputBytes?: number;
}

/** A hook's program as it runs: a path with a `/` is taken from `root`; a bare name stays for PATH. */
export function resolveHookProgram(root: string, program: string): string {
  return program.includes('/') ? resolve(root, program) : program;
}

/** `'...'`-quoted for bash, whatever the string holds. */
function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Why a hook's command is unsafe to run, or undefined. What governs the agent must be out of its
 * reach (SPEC §10.3): a program (or an argument naming a file) that is inside the workspace but
 * outside its protected paths (`.dsh/`, …) could be rewritten by the agent's own `write` or
 * `bash`. Put hook scripts under `.dsh/hooks/`.
 */
export function hookCommandProblem(root: string, command: readonly string[], userConfigDir?: string): string | undefined {
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return undefined;
  }
  const list = protectedPaths({ root: realRoot, ...(userConfigDir ? { userConfigDir } : {}), gitDirs: gitPointerDirs(realRoot) });
  for (const [i, arg] of command.entries()) {
    // The program is a path only with a `/` (else PATH finds it); an argument naming a file is a
    // path either way (`node check.js` runs the workspace's check.js).
    if ((i === 0 && !arg.includes('/')) || arg.startsWith('-') || arg === '') continue;
    const abs = resolve(realRoot, arg);
    if (!existsSync(abs)) {
      if (i === 0) return `the program ${JSON.stringify(arg)} does not exist (a path is taken from the workspace root)`;
      continue;
    }
    let real: string;
    try {
      real = realpathSync(abs);
    } catch {
      continue;
    }
    const rel = relative(realRoot, real);
    const inside = rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
    if (inside && !protectedBy(list, real)) {
      return `${JSON.stringify(arg)} is inside the workspace, where the agent can change it: put hook scripts under .dsh/hooks/ (read-only to every tool and command)`;
    }
  }
  return undefined;
}

/** A runner of hook processes in `options.sandbox`. */
export function createHookRunner(options: HookRunnerOptions): HookRunner {
  const { sandbox } = options;
  const grace = options.killGraceMs ?? 500;
  const probe = options.probePidNamespace ?? pidNamespaceSupport;
  const maxOutputBytes = options.maxOutputBytes ?? 4 * 1024 * 1024;

  async function isolationOutsideSandbox(): Promise<Isolation> {
    if (options.isolation === 'process-group') return { kind: 'process-group' };
    const p = await probe();
    if (p.ok) return { kind: 'pid-namespace', prefix: p.prefix };
    throw new Error(`cannot isolate the hook in a PID namespace, so processes it starts could outlive it (${p.reason})`);
  }

  return async ({ argv, stdin, timeoutMs }): Promise<HookRunOutcome> => {
    if (argv.length === 0) throw new Error('a hook command is an argv with the program first');
    const cwd = await realpath(options.root);
    const command = `exec ${[resolveHookProgram(cwd, argv[0]!), ...argv.slice(1)].map(shellQuote).join(' ')}`;
    let prepared: { iso: Isolation; env: Record<string, string>; finish: () => Promise<unknown> };
    try {
      if (sandbox.mode === 'full-access') {
        const w = await sandbox.wrap(['/bin/bash', '-c', command], { cwd });
        prepared = { iso: await isolationOutsideSandbox(), env: w.env, finish: w.finish };
      } else {
        const w = await sandbox.wrap(initArgv(command, grace), { cwd, asPid1: true, infoFd: 3 });
        prepared = { iso: { kind: 'sandboxed', file: w.file, args: w.args, infoFd: 3 }, env: w.env, finish: w.finish };
      }
    } catch (e) {
      if (e instanceof SandboxUnavailableError) throw new Error(`its ${sandbox.mode} sandbox cannot be made here (${e.reason})`);
      throw e;
    }
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error('timeout')), timeoutMs);
    try {
      const run = await runIsolated(command, { cwd, env: prepared.env, signal: deadline.signal, isolation: prepared.iso, killGraceMs: grace, maxOutputBytes, stdin });
      if (run.stopped) return { kind: 'timeout', stdout: run.stdout, stderr: run.stderr };
      return { kind: 'exited', code: run.exitCode, signal: run.signal, stdout: run.stdout, stderr: run.stderr };
    } finally {
      clearTimeout(timer);
      // Every process of the hook is gone: what it made at a protected path is moved aside.
      await prepared.finish().catch(() => undefined);
    }
  };
}
