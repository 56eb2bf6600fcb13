/**
 * The `mcpServers` configuration, as users already write it for other agents (Claude Code, Codex,
 * Cursor): `{ name: { command, args, env, cwd } | { url, headers } }`, plus dsh's own keys for
 * start-up and call limits and for which tools may run in parallel.
 */
import * as z from 'zod';

/** Between a server's name and its tool's name in the names the model sees: `server__tool`. */
export const MCP_NAME_SEPARATOR = '__';

const NAME_RULE = 'a server name is letters, digits, "-" and single "_" (no "__", no leading or trailing "_"), at most 64';

/**
 * A server name: letters, digits, `-` and single `_` (no `__`, no leading or trailing `_`), so the
 * first `__` of a namespaced tool name always ends the server name and two servers cannot collide.
 */
export const McpServerNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/, NAME_RULE)
  .max(64);

const trustKeys = {
  /**
   * Tools of this server that may run in parallel with other calls: `true` for all of them, or a
   * list of the server's own tool names. Default: none (every call is exclusive).
   */
  concurrencySafe: z.union([z.boolean(), z.array(z.string())]).optional(),
  /** Believe this server's `readOnlyHint` annotations: a tool it marks read-only may run in parallel. */
  trustReadOnlyHint: z.boolean().optional(),
  /** How long connecting and listing tools may take before the server is reported and skipped (default 30 s). */
  startupTimeoutMs: z.number().int().positive().max(2_147_483_647).optional(),
  /** How long one call may wait for the server's answer before it is cancelled as `TIMEOUT` (default 10 min). */
  callTimeoutMs: z.number().int().positive().max(2_147_483_647).optional(),
  /**
   * Bytes one message may take: a stdio line, an SSE event (and so one line of it) or a JSON
   * answer over HTTP (default 10 MiB, the SDK's stdio buffer). Past it over stdio the connection
   * is closed (the stream cannot be trusted); over HTTP the call fails and the connection stays.
   */
  maxMessageBytes: z.number().int().positive().max(1024 * 1024 * 1024).optional(),
  /** Skip this server without removing it from the file. */
  disabled: z.boolean().optional(),
};

/** A server started as a child process, spoken to over stdin/stdout. */
export const McpStdioServerSchema = z.object({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  /** Added to a minimal default environment (PATH, HOME, …), as other agents do. */
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  /**
   * Run the server in dsh's OS sandbox, as `bash` (bubblewrap): `read-only`, `workspace-write`
   * (writes only in the workspace and a private /tmp; .dsh/, dsh.config.json and .git
   * read-only) or `full-access`. Default: not sandboxed (the server has your rights).
   */
  sandbox: z.enum(['read-only', 'workspace-write', 'full-access']).optional(),
  /** With `sandbox`: let the server reach the network (default false). */
  network: z.boolean().optional(),
  ...trustKeys,
});

/** A server reached over Streamable HTTP. */
export const McpHttpServerSchema = z.object({
  type: z.enum(['http', 'streamable-http']).optional(),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).optional(),
  /** Bytes one call's answer stream may carry in all, its answer and notifications (default 64 MiB). */
  maxResponseBytes: z.number().int().positive().max(16 * 1024 * 1024 * 1024).optional(),
  ...trustKeys,
});

/** One entry of `mcpServers`. Unknown keys (other agents' settings) are ignored. */
export const McpServerConfigSchema = z.union([McpStdioServerSchema, McpHttpServerSchema], {
  error: 'expected a stdio server { command, args?, env?, cwd? } or a Streamable HTTP server { url (http or https), headers? }',
});
/** One MCP server: a command over stdio, or a URL over streamable HTTP. */
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;
/** An MCP server started as a command, spoken to over stdio (sandboxed by default). */
export type McpStdioServerConfig = z.infer<typeof McpStdioServerSchema>;
/** An MCP server at a URL, over streamable HTTP. */
export type McpHttpServerConfig = z.infer<typeof McpHttpServerSchema>;

/** The whole `mcpServers` map: server name → entry. */
export const McpServersSchema = z.record(McpServerNameSchema, McpServerConfigSchema);
/** MCP servers by name (the config's `mcpServers`). */
export type McpServers = z.infer<typeof McpServersSchema>;

export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
export const DEFAULT_CALL_TIMEOUT_MS = 600_000;

export const isStdioServer = (c: McpServerConfig): c is McpStdioServerConfig => 'command' in c;

/**
 * Whether a tool may run in parallel with other calls. MCP annotations are hints from the server,
 * which is not trusted: only the configuration can make a tool concurrency-safe.
 */
export function isTrustedConcurrencySafe(config: McpServerConfig, toolName: string, annotations: { readOnlyHint?: unknown } | undefined): boolean {
  const safe = config.concurrencySafe;
  if (safe === true) return true;
  if (Array.isArray(safe) && safe.includes(toolName)) return true;
  return config.trustReadOnlyHint === true && annotations?.readOnlyHint === true;
}

/** Validates an `mcpServers` map; a bad one throws a TypeError naming every problem by path. */
export function parseMcpServers(value: unknown): McpServers {
  const parsed = McpServersSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  // zod reports a bad record key only as "Invalid key": name the key and the rule.
  const badNames =
    value !== null && typeof value === 'object'
      ? Object.keys(value).filter((k) => !McpServerNameSchema.safeParse(k).success).map((k) => `✖ ${JSON.stringify(k.slice(0, 80))}: ${NAME_RULE}`)
      : [];
  throw new TypeError(`invalid "mcpServers" configuration:\n${[...badNames, z.prettifyError(parsed.error)].join('\n')}`);
}
