/**
 * Finding, reading, merging and validating the config (Node):
 * - the project files `dsh.config.json` (findProjectConfigs): the root config, at the project
 *   root (the outermost directory holding `.git` above the working directory, $HOME and `/`
 *   excepted; outside a repository the working directory, and only when no parent below $HOME
 *   holds a `dsh.config.json`); then every `dsh.config.json` between the project root and the
 *   working directory, which can only narrow (narrowConfig.ts), each ignored key said in one line.
 *   A stray `/tmp/dsh.config.json` left by someone else is never read. `file` names the one
 *   project file explicitly instead (trusted as the root config). The directory of the nearest
 *   file read is the workspace root (else the working directory).
 * - the user file `$XDG_CONFIG_HOME/dsh/config.json` (`~/.config/dsh/config.json` when
 *   XDG_CONFIG_HOME is unset, empty or relative).
 * Each file is validated on its own, so an error names the file and the field, in one line:
 *   `dsh.config.json: permissions[2].decision: expected "allow" | "deny" | "ask", got "maybe"`.
 * Then the user file merges under the project's (mergeConfigs).
 */
import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { patternOf } from '../runtime/policies/applyConfig.js';
import { DshConfigSchema, type BashPatternConfig, type DshConfig } from './schema.js';
import { describeFailure } from '../runtime/policies/ruleExamples.js';
import { checkConfigExamples } from './examples.js';
import { formatIssue } from './formatIssue.js';
import { narrowConfig } from './narrowConfig.js';
import type { ServerOrigin } from './serverTrust.js';

/** The project config's file name, searched for from the working directory up. */
export const PROJECT_CONFIG_FILE = 'dsh.config.json';
/** The user config's file name, in `userConfigPath()`'s directory. */
export const USER_CONFIG_FILE = 'config.json';

/** A config file that cannot be read, is not JSON or does not fit the schema. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    /** The file as shown in the message. */
    readonly file: string,
    /** `permissions[2].decision`, when a field is at fault. */
    readonly field: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Where `loadConfig` looks, and what it checks. */
export interface LoadConfigOptions {
  /** Where to start looking for `dsh.config.json` (default `process.cwd()`). */
  cwd?: string;
  /** Environment for XDG_CONFIG_HOME / HOME (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The project file to use instead of searching (`dsh run --config FILE`); it must exist. */
  file?: string;
  /** Read the user-level file (default true). */
  user?: boolean;
  /** Check the examples the rules carry, refusing the config when one fails (default true; `dsh policy test` reports them all itself). */
  checkExamples?: boolean;
}

/** The merged config, the workspace root, and the files it came from. */
export interface LoadedConfig {
  /** The merged, validated config ({} when there is no file). */
  config: DshConfig;
  /** The workspace root: the directory of the project file found by searching, else `cwd`. */
  root: string;
  /** The files read, user file first, then the root config, then the ones below it. */
  files: string[];
  /** One line per key of a config below the project root that was ignored (it would have widened). */
  ignored: string[];
  /** The files of `files` below the project root (they only narrowed). */
  narrowing: string[];
  /** The `mcpServers` named by the project file (they start only once trusted: serverTrust.ts). */
  serverOrigins: Record<string, ServerOrigin>;
}

/** Validates one file's text. Throws a ConfigError naming `shownAs` and the field. */
export function parseConfig(text: string, shownAs: string): DshConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(shownAs, undefined, `${shownAs}: not valid JSON: ${(e as Error).message.replace(/\r?\n/g, '\\n')}`);
  }
  let r: ReturnType<typeof DshConfigSchema.safeParse>;
  try {
    r = DshConfigSchema.safeParse(json, { reportInput: true });
  } catch (e) {
    // JSON nested deep enough to exhaust the stack while it is validated (JSON.parse took it).
    if (e instanceof RangeError) throw new ConfigError(shownAs, undefined, `${shownAs}: nested too deeply to validate`, { cause: e });
    throw e;
  }
  if (r.success) return r.data;
  const [first, ...more] = r.error.issues;
  // One line, whatever the messages echo (a pattern, JSON.parse's excerpt of the file).
  const line = formatIssue(first!).replace(/\r?\n/g, '\\n');
  const field = line.slice(0, line.indexOf(':'));
  throw new ConfigError(shownAs, field, `${shownAs}: ${line}${more.length > 0 ? ` (and ${more.length} more)` : ''}`);
}

/**
 * `project` over `user`: a setting in the project file wins; `timeouts`, `callOptions` and `mcpServers` merge by
 * key (a project server replaces the user's of the same name); permission rules are the
 * project's, then the user's (the first match decides, so the project's come first); bash deny
 * patterns are both files' (a project file cannot drop a user's deny pattern); so are the hooks of
 * each stage (the project's, then the user's); `otel` merges by key, but only the user file can
 * turn `recordContent` on.
 */
export function mergeConfigs(user: DshConfig, project: DshConfig): DshConfig {
  const out: DshConfig = { ...user, ...project };
  if (user.timeouts || project.timeouts) out.timeouts = { ...user.timeouts, ...project.timeouts };
  if (user.callOptions || project.callOptions) out.callOptions = { ...user.callOptions, ...project.callOptions };
  if (user.mcpServers || project.mcpServers) out.mcpServers = { ...user.mcpServers, ...project.mcpServers };
  if (user.permissions || project.permissions) out.permissions = [...(project.permissions ?? []), ...(user.permissions ?? [])];
  if (user.hooks || project.hooks) out.hooks = mergeHooks(user.hooks ?? {}, project.hooks ?? {});
  if (user.sandbox || project.sandbox) out.sandbox = mergeSandbox(user.sandbox ?? {}, project.sandbox ?? {});
  if (user.otel || project.otel) {
    // Content (call arguments and results) goes to the collector only where the user's own file
    // asks for it: a project file (a cloned repository's) can turn it off, never on.
    const { recordContent: _projectContent, ...projectOtel } = project.otel ?? {};
    out.otel = { ...user.otel, ...projectOtel };
    if (user.otel?.recordContent === true && project.otel?.recordContent !== false) out.otel.recordContent = true;
    else delete out.otel.recordContent;
  }
  if (user.bash || project.bash) {
    out.bash = { deny: uniquePatterns([...(user.bash?.deny ?? []), ...(project.bash?.deny ?? [])]) };
    const allow = uniquePatterns([...(user.bash?.allow ?? []), ...(project.bash?.allow ?? [])]);
    if (allow.length > 0) out.bash.allow = allow;
  }
  return out;
}

/** Both files' hooks, stage by stage: the project's first, then the user's (a project cannot drop a user's hook). */
function mergeHooks(user: NonNullable<DshConfig['hooks']>, project: NonNullable<DshConfig['hooks']>): NonNullable<DshConfig['hooks']> {
  const out: NonNullable<DshConfig['hooks']> = {};
  for (const stage of ['preExecute', 'guard', 'postExecute', 'result'] as const) {
    const list = [...(project[stage] ?? []), ...(user[stage] ?? [])];
    if (list.length > 0) out[stage] = list;
  }
  return out;
}

/** Each pattern once (the first entry of it kept, with its examples). */
function uniquePatterns(entries: readonly BashPatternConfig[]): BashPatternConfig[] {
  const seen = new Set<string>();
  return entries.filter((e) => {
    const p = patternOf(e);
    if (seen.has(p)) return false;
    seen.add(p);
    return true;
  });
}

const SANDBOX_STRICTNESS = ['read-only', 'workspace-write', 'full-access'] as const;

/**
 * A project file cannot loosen the sandbox the user file sets: of two modes the stricter holds,
 * and the network stays off if either file turns it off. Pass-through names and deny-read paths are
 * both files'; `allowRead` and `unixSockets: true` are the user file's only.
 */
function mergeSandbox(user: NonNullable<DshConfig['sandbox']>, project: NonNullable<DshConfig['sandbox']>): NonNullable<DshConfig['sandbox']> {
  const out = { ...user, ...project };
  if (user.mode && project.mode) out.mode = SANDBOX_STRICTNESS[Math.min(SANDBOX_STRICTNESS.indexOf(user.mode), SANDBOX_STRICTNESS.indexOf(project.mode))];
  if (user.network !== undefined && project.network !== undefined) out.network = user.network && project.network;
  if (user.passEnv || project.passEnv) out.passEnv = [...new Set([...(user.passEnv ?? []), ...(project.passEnv ?? [])])];
  // Hiding more is both files' to ask; showing a credential again is the user's file's alone.
  if (user.denyRead || project.denyRead) out.denyRead = [...new Set([...(user.denyRead ?? []), ...(project.denyRead ?? [])])];
  if (user.allowRead) out.allowRead = user.allowRead;
  else delete out.allowRead;
  if (user.unixSockets === true && project.unixSockets !== false) out.unixSockets = true;
  else delete out.unixSockets;
  return out;
}

/** The user-level config file's path. */
export function userConfigPath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(base, 'dsh', USER_CONFIG_FILE);
}

const exists = (p: string) => stat(p).then(() => true, () => false);

/** The project files of `cwd`: the root config (trusted) and those below it (narrowing only). */
export interface ProjectConfigs {
  /** The project root (see findProjectConfigs). */
  readonly root: string;
  /** `root/dsh.config.json` when it exists and is read as the root config. */
  readonly rootFile?: string;
  /** Each `dsh.config.json` below the project root down to `cwd`, outermost first. */
  readonly nested: readonly string[];
}

/**
 * The project root of `cwd` and its config files. Walking up from `cwd`, the directories that
 * count are `cwd` and its parents strictly below $HOME (or below `/` when `cwd` is not under
 * $HOME): a dotfiles repository in $HOME or a stray `/dsh.config.json` does not make a project.
 * - Inside a repository, the project root is the outermost of them holding `.git` (a `.git`
 *   planted in a subdirectory does not make a new root); its `dsh.config.json` is the root config.
 * - Outside one, the project root is the outermost of them holding `dsh.config.json` (else `cwd`);
 *   its file is the root config only when that is `cwd` itself (a parent's file is never read).
 * Every `dsh.config.json` below the project root down to `cwd` narrows only.
 */
export async function findProjectConfigs(cwd: string, env: Readonly<Record<string, string | undefined>> = process.env): Promise<ProjectConfigs> {
  const start = resolve(cwd);
  const home = resolve(env.HOME || homedir());
  const dirs: string[] = [start];
  // Under $HOME (or $HOME itself): the walk stops before $HOME; elsewhere before `/`.
  const underHome = start === home || isInside(home, start);
  for (let d = dirname(start); d !== dirname(d); d = dirname(d)) {
    if (underHome && !isInside(home, d)) break;
    dirs.push(d);
  }
  const withConfig = new Set<string>();
  let gitRoot: string | undefined;
  for (const d of dirs) {
    if (await exists(join(d, PROJECT_CONFIG_FILE))) withConfig.add(d);
    if (await exists(join(d, '.git'))) gitRoot = d;
  }
  const outermostConfig = dirs.filter((d) => withConfig.has(d)).at(-1);
  const root = gitRoot ?? outermostConfig ?? start;
  const rootFile = withConfig.has(root) && (gitRoot !== undefined || root === start) ? join(root, PROJECT_CONFIG_FILE) : undefined;
  const below = dirs.slice(0, dirs.indexOf(root)).reverse();
  return { root, ...(rootFile ? { rootFile } : {}), nested: below.filter((d) => withConfig.has(d)).map((d) => join(d, PROJECT_CONFIG_FILE)) };
}

/** `path` is strictly inside `dir`. */
function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/** The nearest project file of `cwd` that is read (the root config or one below it), if any. */
export async function findProjectConfig(cwd: string, env: Readonly<Record<string, string | undefined>> = process.env): Promise<string | undefined> {
  const found = await findProjectConfigs(cwd, env);
  return found.nested.at(-1) ?? found.rootFile;
}

async function readConfigFile(path: string, shownAs: string, mustExist: boolean): Promise<DshConfig | undefined> {
  return (await readConfigText(path, shownAs, mustExist))?.config;
}

async function readConfigText(path: string, shownAs: string, mustExist: boolean): Promise<{ config: DshConfig; text: string } | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (!mustExist && code === 'ENOENT') return undefined;
    throw new ConfigError(shownAs, undefined, `${shownAs}: cannot be read: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (e as Error).message}`, { cause: e });
  }
  return { config: withOrigin(parseConfig(text, shownAs), shownAs), text };
}

/**
 * Each permission rule and bash pattern of a file, marked with the file it came from (`from`), so
 * a denial names it (issue 32 item 2) once the files are merged.
 */
function withOrigin(config: DshConfig, shownAs: string): DshConfig {
  const out: DshConfig = { ...config };
  if (config.permissions) out.permissions = config.permissions.map((r) => ({ ...r, from: shownAs }));
  if (config.bash) {
    const mark = (list: readonly BashPatternConfig[] | undefined) => list?.map((e) => ({ ...(typeof e === 'string' ? { pattern: e } : e), from: shownAs }));
    const deny = mark(config.bash.deny);
    const allow = mark(config.bash.allow);
    out.bash = { ...(deny ? { deny } : {}), ...(allow ? { allow } : {}) };
  }
  return out;
}

/** Finds, reads, validates and merges the user and project config files. */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const env = options.env ?? process.env;
  const files: string[] = [];
  let user: DshConfig = {};
  if (options.user !== false) {
    const path = userConfigPath(env);
    const c = await readConfigFile(path, path, false);
    if (c) {
      user = c;
      files.push(path);
    }
  }
  const found: ProjectConfigs = options.file !== undefined ? { root: cwd, rootFile: resolve(cwd, options.file), nested: [] } : await findProjectConfigs(cwd, env);
  const projectPath = found.rootFile;
  let project: DshConfig = {};
  const serverOrigins: Record<string, ServerOrigin> = {};
  if (projectPath) {
    const shownAs = relativeOrAbsolute(cwd, projectPath);
    const c = await readConfigText(projectPath, shownAs, true);
    if (c) {
      project = c.config;
      files.push(projectPath);
      for (const name of Object.keys(c.config.mcpServers ?? {})) serverOrigins[name] = { file: projectPath, shownAs, text: c.text };
    }
  }
  let config = mergeConfigs(user, project);
  const ignored: string[] = [];
  const narrowing: string[] = [];
  for (const path of found.nested) {
    const shownAs = relativeOrAbsolute(cwd, path);
    const c = await readConfigFile(path, shownAs, false);
    if (!c) continue;
    files.push(path);
    narrowing.push(path);
    const narrowed = narrowConfig(config, c, shownAs);
    config = narrowed.config;
    ignored.push(...narrowed.ignored);
  }
  const nearest = found.nested.at(-1) ?? projectPath;
  const root = nearest && options.file === undefined ? dirname(nearest) : cwd;
  if (options.checkExamples !== false) {
    const { failures } = await checkConfigExamples(config, root);
    if (failures.length > 0) {
      // Indices are the merged config's (project rules first) when both files have rules.
      const shownAs = files.length === 1 ? (files[0] === projectPath ? relativeOrAbsolute(cwd, projectPath!) : files[0]!) : 'config (user and project files merged)';
      const more = failures.length > 1 ? ` (and ${failures.length - 1} more: dsh policy test lists them)` : '';
      throw new ConfigError(shownAs, failures[0]!.rule, `${shownAs}: ${describeFailure(failures[0]!)}${more}`.replace(/\r?\n/g, '\\n'));
    }
  }
  return { config, root, files, ignored, narrowing, serverOrigins };
}

function relativeOrAbsolute(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}
