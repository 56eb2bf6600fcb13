import type { SpillStore } from '../../runtime/spill/spillStore.js';
import { createSandbox, type SandboxMode, type SandboxOptions } from '../sandbox/sandbox.js';
import { createBashTool, type BashIsolation } from './bash.js';
import { createEditTool } from './edit.js';
import { createGlobTool } from './glob.js';
import { createGrepTool } from './grep.js';
import { createReadTool } from './read.js';
import { Workspace } from './workspace.js';
import { createWriteTool } from './write.js';

/** The built-in tools of a session: the workspace root, the spill store, the sandbox of `bash`. */
export interface BuiltinToolsOptions {
  /** The workspace every tool is confined to. */
  root: string;
  /**
   * The user-level dsh config directory, which no tool may change, like `.dsh/` and
   * `dsh.config.json` (default `$XDG_CONFIG_HOME/dsh`, or `~/.config/dsh`).
   */
  userConfigDir?: string;
  /** Lets `read` and `grep` open spill locators (pass the store the spill policy saves to). */
  spillStore?: SpillStore;
  /** Largest page `read` returns, in UTF-8 bytes (default 12 KiB, under the default inline limit). */
  maxReadBytes?: number;
  /** `bash` deadline when the call gives none (default 120 s). */
  bashTimeoutMs?: number;
  /** After SIGTERM, how long a stopped `bash` command (or what a finished one left running) gets before SIGKILL (default 1 s). */
  bashKillGraceMs?: number;
  /**
   * How `bash` keeps commands from leaving processes behind. Default `'pid-namespace'`: each call
   * runs in a PID namespace that dies with the call (and with this process); where that is
   * unavailable, `bash` refuses to run. `'process-group'` opts into the weaker mode, where `setsid`
   * or double-forked processes, or anything once this process is SIGKILLed, can survive the call.
   */
  bashIsolation?: BashIsolation;
  /**
   * The OS sandbox `bash` runs every command in (SPEC §10.2). A mode, or the mode with its
   * settings. Default `'workspace-write'`: writes only inside the workspace and a private `/tmp`
   * (`.dsh/`, `dsh.config.json`, `.git` read-only), no network, an allowlisted environment,
   * credential files hidden. `'read-only'`: no writes but the private `/tmp`.
   * `'full-access'`: no confinement (explicit choice only). Where the sandbox cannot be made,
   * `bash` refuses with `TOOL_FAILED`.
   */
  sandbox?: SandboxMode | BashSandboxSettings;
}

/** The sandbox settings a user chooses (see `createSandbox` for the rest). */
export type BashSandboxSettings = Omit<SandboxOptions, 'root'>;

/**
 * The built-in tools of one session, sharing one workspace state (what this session has read):
 * `read`, `grep`, `glob` (concurrency-safe) and `write`, `edit`, `bash` (exclusive).
 *
 * @example
 * ```ts
 * const tools = createBuiltinTools({ root: process.cwd(), sandbox: 'workspace-write' });
 * const rt = createRuntime({ tools: tools.all });
 * ```
 */
export function createBuiltinTools(options: BuiltinToolsOptions) {
  const workspace = new Workspace(options.root, { userConfigDir: options.userConfigDir });
  const read = createReadTool(workspace, { spillStore: options.spillStore, maxReadBytes: options.maxReadBytes });
  const grep = createGrepTool(workspace, { spillStore: options.spillStore });
  const glob = createGlobTool(workspace);
  const write = createWriteTool(workspace);
  const edit = createEditTool(workspace);
  const settings = typeof options.sandbox === 'string' ? { mode: options.sandbox } : (options.sandbox ?? {});
  const sandbox = createSandbox({ ...settings, root: options.root });
  const bash = createBashTool(workspace, {
    sandbox,
    defaultTimeoutMs: options.bashTimeoutMs,
    killGraceMs: options.bashKillGraceMs,
    isolation: options.bashIsolation,
  });
  return { workspace, sandbox, read, grep, glob, write, edit, bash, all: [read, grep, glob, write, edit, bash] as const };
}

/** What `createBuiltinTools` returns: each tool, the workspace and sandbox they share, and `all` of them for `createRuntime({ tools })`. */
export type BuiltinTools = ReturnType<typeof createBuiltinTools>;

/**
 * The built-in tools' names, and those of them that only read (plan mode lets them run; the CLI's
 * default question is not asked about them), read from the tools' own definitions. Making the
 * tools touches nothing (the workspace and the sandbox are resolved on a tool's first call).
 */
export function builtinToolNames(): { readonly all: readonly string[]; readonly readOnly: ReadonlySet<string> } {
  const { all } = createBuiltinTools({ root: '/' });
  return { all: all.map((t) => t.name), readOnly: new Set(all.filter((t) => t.readOnly).map((t) => t.name)) };
}
