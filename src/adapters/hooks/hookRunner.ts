/**
 * The {@link HookRunner} of command hooks on Node: each run is one process in the sandbox `bash`
 * uses (SPEC §10.2): the same mode, network setting and private `/tmp`, the allowlisted environment
 * (SPEC §10.8), and a PID namespace that dies with it, so no process the hook starts
 * outlives it (a timeout kills the whole tree). The call's JSON goes to its stdin.
 *
 * A program with a `/` in it (`.dsh/hooks/check.sh`, `./tools/x`) is taken from the workspace root;
 * a bare name (`node`, `jq`) is looked up on PATH, less the directories tools can write.
 *
 * What a hook runs is what the user installed (SPEC §10.7, hookIsolation.ts): no PATH entry,
 * interpreter variable, `node_modules` or `package.json` that a tool call can write reaches it.
 */
import { realpath } from 'node:fs/promises';
import { accessSync, constants, existsSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { HOOK_STRIPPED_ENV, homeModulePlaces, hookHiddenPaths, hookSearchPath, pythonCwdImport, toolWritableIn, type ToolWritable } from './hookIsolation.js';
import type { HookRunner, HookRunOutcome } from '../../runtime/policies/commandHooks.js';
import { SandboxUnavailableError, type Sandbox } from '../sandbox/sandbox.js';
import { gitLocations } from '../sandbox/gitPointers.js';
import { protectedBy, protectedPaths } from '../sandbox/protectedPaths.js';
import { initArgv, runIsolated, type Isolation } from '../tools/isolatedProcess.js';
import { pidNamespaceSupport, type PidNamespaceProbe } from '../tools/pidNamespace.js';
import type { BashIsolation } from '../tools/bash.js';

/** How `createHookRunner` runs command hooks: the workspace root and the sandbox they run in. */
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
  /** Where the hook's PATH comes from (default `process.env`; the sandbox's environment should agree). */
  readonly env?: Readonly<Record<string, string | undefined>>;
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
export function hookCommandProblem(root: string, command: readonly string[], userConfigDir?: string, pathVar: string | undefined = process.env.PATH): string | undefined {
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return undefined;
  }
  const list = protectedPaths({ root: realRoot, ...(userConfigDir ? { userConfigDir } : {}), ...gitLocations(realRoot) });
  const python = pythonCwdImport(command);
  if (python) return python;
  const program = command[0];
  if (program !== undefined && !program.includes('/')) {
    // Found on PATH as the user's shell would: a planted program in the workspace is refused by name.
    const writable = toolWritableIn(realRoot, (p) => protectedBy(list, p) !== undefined);
    const found = findOnPath(program, (pathVar ?? '').split(':').map((d) => resolve(realRoot, d || '.')));
    if (found !== undefined && writable(found)) {
      return `the program ${JSON.stringify(program)} is found on PATH at ${found}, inside the workspace, where the agent can change it: name a program outside the workspace (or under .dsh/hooks/)`;
    }
  }
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

/** The first executable `name` in `dirs`, symlinks resolved; undefined if none. */
function findOnPath(name: string, dirs: readonly string[]): string | undefined {
  for (const d of dirs) {
    const candidate = join(d, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return realpathSync(candidate);
    } catch {
      // not here
    }
  }
  return undefined;
}

function kindOf(path: string): 'dir' | 'file' | 'missing' {
  try {
    return statSync(path).isDirectory() ? 'dir' : 'file';
  } catch {
    return 'missing';
  }
}

let emptyPackageJson: string | undefined;
/** A read-only `{}` file outside any workspace, shown in place of a tool-writable `package.json`. */
function emptyPackageJsonFile(): string {
  if (emptyPackageJson !== undefined && existsSync(emptyPackageJson)) return emptyPackageJson;
  const dir = mkdtempSync(join(tmpdir(), 'dsh-hook-'));
  const file = join(dir, 'package.json');
  writeFileSync(file, '{}\n', { mode: 0o444 });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return (emptyPackageJson = file);
}

/** What a hook runs, from what tools cannot write: its program found on a safe PATH, and what to cover. */
function hookPlan(root: string, argv: readonly string[], writable: ToolWritable, env: Readonly<Record<string, string | undefined>>) {
  const path = hookSearchPath(env.PATH, writable);
  const first = argv[0]!;
  let program = resolveHookProgram(root, first);
  if (!first.includes('/')) {
    const found = findOnPath(first, path.split(':').filter(Boolean));
    if (found === undefined) throw new Error(`${JSON.stringify(first)} was not found on the hook's PATH (${path || 'empty'}; directories the agent can write are left out)`);
    program = found;
  }
  const scripts: string[] = [];
  for (const arg of [program, ...argv.slice(1)]) {
    if (arg === '' || arg.startsWith('-')) continue;
    const abs = resolve(root, arg);
    try {
      if (statSync(abs).isFile()) scripts.push(realpathSync(abs));
    } catch {
      // not a file: nothing to look up from
    }
  }
  const hidden = hookHiddenPaths(scripts, root, writable, kindOf);
  const home = homeModulePlaces(env.HOME, writable, kindOf);
  return { path, program, hideDirs: [...hidden.dirs, ...home.dirs], coverFiles: hidden.files.map((p) => ({ path: p, with: emptyPackageJsonFile() })), setEnv: home.env };
}

/** The hook's environment: the sandbox's, with the safe PATH and no interpreter-loading variable. */
function hookEnv(env: Record<string, string>, plan: { path: string; setEnv: Record<string, string> }): Record<string, string> {
  const out: Record<string, string> = { ...env, PATH: plan.path };
  for (const name of HOOK_STRIPPED_ENV) delete out[name];
  return { ...out, ...plan.setEnv };
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
    const own = protectedPaths({ root: cwd, ...gitLocations(cwd) });
    const writable = toolWritableIn(cwd, (p) => protectedBy(own, p) !== undefined || protectedBy(sandbox.protected, p) !== undefined);
    const plan = hookPlan(cwd, argv, writable, options.env ?? process.env);
    const command = `exec ${[plan.program, ...argv.slice(1)].map(shellQuote).join(' ')}`;
    let prepared: { iso: Isolation; env: Record<string, string>; finish: () => Promise<unknown> };
    try {
      if (sandbox.mode === 'full-access') {
        const w = await sandbox.wrap(['/bin/bash', '-c', command], { cwd });
        prepared = { iso: await isolationOutsideSandbox(), env: hookEnv(w.env, plan), finish: w.finish };
      } else {
        const w = await sandbox.wrap(initArgv(command, grace), { cwd, asPid1: true, infoFd: 3, hideDirs: plan.hideDirs, coverFiles: plan.coverFiles });
        prepared = { iso: { kind: 'sandboxed', file: w.file, args: w.args, infoFd: 3 }, env: hookEnv(w.env, plan), finish: w.finish };
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
      // A hook that failed while the workspace's node_modules were hidden from it says so, beside
      // its own words (a note of its own, so that cutting a long stderr loses neither).
      const hidden = sandbox.mode !== 'full-access' && run.exitCode !== 0 && run.exitCode !== 2 && plan.hideDirs.length > 0;
      const note = hidden ? `[dsh: ${plan.hideDirs.map((d) => relative(cwd, d) || '.').join(', ')} hidden from hooks (the agent can write there): put a hook's dependencies in .dsh/hooks/node_modules]` : undefined;
      return { kind: 'exited', code: run.exitCode, signal: run.signal, stdout: run.stdout, stderr: run.stderr, ...(note ? { note } : {}) };
    } finally {
      clearTimeout(timer);
      // Every process of the hook is gone: what it made at a protected path is moved aside.
      await prepared.finish().catch(() => undefined);
    }
  };
}
