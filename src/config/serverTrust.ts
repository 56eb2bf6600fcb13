/**
 * Project MCP servers are trusted before they start (issue 31 item 4, SPEC §10.7). A server named
 * by a project config (not the user's own file) is code from the repository: it starts only once
 * the person approved that exact command, and it runs in the sandbox unless its entry says
 * otherwise.
 * - The key of an approval: a SHA-256 of the server's name, its command (argv, the names of its
 *   env, cwd, sandbox and network; for HTTP the URL and the header names), the config file's path
 *   and the file's whole content. Any change to the file asks again.
 * - Approvals are remembered in `trusted-mcp-servers.json` in the user config dir
 *   (`$XDG_CONFIG_HOME/dsh`), outside the workspace and protected from every tool (SPEC §10.3).
 * - A project stdio server without `"sandbox"` runs in `workspace-write` (no network).
 * - Not yet trusted: on a terminal the person is asked once (`? start MCP server NAME: COMMAND`);
 *   without one, or on `n`, the server is not started, with one line saying how to trust it
 *   (`dsh mcp trust`, or `--trust-project-servers` for one run, e.g. in CI).
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { userConfigDir } from '../adapters/sandbox/protectedPaths.js';
import { isStdioServer, type McpServerConfig, type McpServers } from '../adapters/mcp/serverConfig.js';
import { visibleLine } from '../protocol/visibleText.js';

/** Where a server's entry came from: a project file, its path (as shown) and its text. */
export interface ServerOrigin {
  readonly file: string;
  readonly shownAs: string;
  readonly text: string;
}

export const TRUST_FILE = 'trusted-mcp-servers.json';

/** The file the approvals are kept in (in the user config dir, outside every workspace). */
export function trustFilePath(env: Readonly<Record<string, string | undefined>>): string {
  return join(userConfigDir(env, env.HOME || homedir()), TRUST_FILE);
}

/** The entry as it will start: a project stdio server without `sandbox` runs in `workspace-write`. */
export function withDefaultSandbox(entry: McpServerConfig): McpServerConfig {
  return isStdioServer(entry) && entry.sandbox === undefined ? { ...entry, sandbox: 'workspace-write' } : entry;
}

const quoteArg = (a: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);

/** The exact command a server runs, one printable line (what the person approves). */
export function serverCommandLine(entry: McpServerConfig): string {
  if (!isStdioServer(entry)) {
    const headers = Object.keys(entry.headers ?? {});
    return visibleLine(`${entry.url}${headers.length ? ` (headers: ${headers.join(', ')})` : ''}`);
  }
  const env = Object.keys(entry.env ?? {}).sort();
  const where = [
    ...(env.length ? [`env ${env.join(', ')}`] : []),
    ...(entry.cwd !== undefined ? [`cwd ${entry.cwd}`] : []),
    `sandbox ${entry.sandbox ?? 'none'}${entry.sandbox && entry.sandbox !== 'full-access' ? (entry.network ? ', network' : ', no network') : ''}`,
  ];
  return visibleLine(`${[entry.command, ...(entry.args ?? [])].map(quoteArg).join(' ')} (${where.join('; ')})`);
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** The key an approval of `name` (as it will start, `entry`) from `origin` is kept under. */
export function serverTrustKey(name: string, entry: McpServerConfig, origin: ServerOrigin): string {
  const what = isStdioServer(entry)
    ? { command: entry.command, args: entry.args ?? [], env: Object.keys(entry.env ?? {}).sort(), cwd: entry.cwd ?? null, sandbox: entry.sandbox ?? null, network: entry.network === true }
    : { url: entry.url, headers: Object.keys(entry.headers ?? {}).sort() };
  return sha256(JSON.stringify({ v: 1, name, what, file: origin.file, content: sha256(origin.text) }));
}

interface TrustRecord {
  readonly server: string;
  readonly file: string;
  readonly command: string;
  readonly at: string;
}

/** The approvals kept in `file` (none when it is missing or unreadable). */
export async function readTrusted(file: string): Promise<Map<string, TrustRecord>> {
  try {
    const json = JSON.parse(await readFile(file, 'utf8')) as { trusted?: Record<string, TrustRecord> };
    return new Map(Object.entries(json.trusted ?? {}));
  } catch {
    return new Map();
  }
}

/** Adds approvals to `file` (written whole, then renamed into place). */
export async function addTrusted(file: string, records: ReadonlyMap<string, TrustRecord>): Promise<void> {
  const all = await readTrusted(file);
  for (const [k, v] of records) all.set(k, v);
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify({ trusted: Object.fromEntries(all) }, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

export interface TrustServersOptions {
  /** The merged `mcpServers`. */
  readonly servers: McpServers;
  /** The servers named by a project file, with that file (user-file servers are absent: trusted). */
  readonly origins: Readonly<Record<string, ServerOrigin>>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `--trust-project-servers`: start every project server this once, without asking or remembering. */
  readonly trustAll?: boolean;
  /** Asks the person (on a terminal) whether to start a server; absent: nobody to ask. */
  readonly ask?: (question: string) => Promise<boolean>;
  /** One line each: a server not started, and why. */
  readonly warn: (line: string) => void;
}

/**
 * The servers to start: the user's as they are; a project's, with the default sandbox, only when
 * trusted (remembered, asked now and answered yes, or `trustAll`). Never throws for a trust file
 * it cannot write (the server still starts once; the line says it was not remembered).
 */
export async function trustedServers(o: TrustServersOptions): Promise<McpServers> {
  const out: McpServers = {};
  const file = trustFilePath(o.env);
  let trusted: Map<string, TrustRecord> | undefined;
  for (const [name, raw] of Object.entries(o.servers)) {
    const origin = o.origins[name];
    if (!origin) {
      out[name] = raw;
      continue;
    }
    const entry = withDefaultSandbox(raw);
    if (raw.disabled === true || o.trustAll === true) {
      out[name] = entry;
      continue;
    }
    const key = serverTrustKey(name, entry, origin);
    trusted ??= await readTrusted(file);
    const command = serverCommandLine(entry);
    if (trusted.has(key)) {
      out[name] = entry;
      continue;
    }
    if (o.ask && (await o.ask(`? start MCP server ${name} (from ${visibleLine(origin.shownAs)}): ${command} [y/N] `))) {
      out[name] = entry;
      try {
        await addTrusted(file, new Map([[key, { server: name, file: origin.file, command, at: new Date().toISOString() }]]));
      } catch (e) {
        o.warn(`dsh: MCP server "${name}" starts this once: the approval could not be remembered in ${file}: ${visibleLine((e as Error).message)}`);
      }
      continue;
    }
    o.warn(
      `dsh: MCP server "${name}" (from ${visibleLine(origin.shownAs)}) not started: its command is not trusted yet (${command}); trust it with dsh mcp trust, or pass --trust-project-servers for one run`,
    );
  }
  return out;
}

/** `dsh mcp trust`: remembers every project server of the config as it will start; one line each. */
export async function trustAllProjectServers(servers: McpServers, origins: Readonly<Record<string, ServerOrigin>>, env: Readonly<Record<string, string | undefined>>): Promise<string[]> {
  const records = new Map<string, TrustRecord>();
  const lines: string[] = [];
  for (const [name, origin] of Object.entries(origins)) {
    const raw = servers[name];
    if (!raw) continue;
    const entry = withDefaultSandbox(raw);
    const command = serverCommandLine(entry);
    records.set(serverTrustKey(name, entry, origin), { server: name, file: origin.file, command, at: new Date().toISOString() });
    lines.push(`trusted MCP server ${name} (from ${visibleLine(origin.shownAs)}): ${command}`);
  }
  if (records.size > 0) await addTrusted(trustFilePath(env), records);
  return lines;
}
