/**
 * One live connection to an MCP server (stdio child process or Streamable HTTP), made within a
 * start-up limit. A connection that ends (the process exits, the server sends bytes that are not
 * JSON-RPC, `close()`) fails every pending call at once with the reason, and later calls fail
 * fast: a call on it never hangs on a dead server.
 *
 * Errors the SDK reports are told apart by where they come from. The transport's own (bytes that
 * are not JSON-RPC, a line over the limit, a broken pipe) mean the stream cannot be trusted: over
 * stdio the connection is closed. The protocol layer's (an answer or a progress notification for
 * a request dsh no longer waits for, which MCP allows after a cancel) are harmless: they are
 * counted and reported as notices (at most MAX_NOTICES per connection), and the connection stays.
 * Over HTTP every answer stream is read within limits (`boundedHttp.ts`).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ErrorCode as McpErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Progress,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { accessSync, constants as fsConstants } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { ErrorCode } from '../../protocol/index.js';
import { createSandbox, type Sandbox, type SandboxedCommand } from '../sandbox/index.js';
import { ToolError } from '../../runtime/toolError.js';
import { BoundedStdioTransport, MessageTooLargeError } from './boundedStdio.js';
import { boundHttpAnswers, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_RESPONSE_BYTES, STREAM_ENDED_CODE } from './boundedHttp.js';
import { createOutputValidator, type SchemaLimits } from './jsonSchemaValidator.js';
import { DEFAULT_CALL_TIMEOUT_MS, DEFAULT_STARTUP_TIMEOUT_MS, isStdioServer, type McpServerConfig } from './serverConfig.js';

/** Most tools read from one server (pages of `tools/list` are followed up to this many tools). */
export const MAX_TOOLS_PER_SERVER = 1000;
const STDERR_TAIL_CHARS = 2000;
/** Harmless protocol events reported per connection; later ones are only counted. */
export const MAX_NOTICES = 10;

/** One MCP tool call: its abort signal, and a listener of its progress notifications. */
export interface McpCallOptions {
  signal: AbortSignal;
  /** Hears the server's progress notifications for this call. */
  onProgress?: (progress: Progress) => void;
}

/** A connection to one MCP server: its tools, calls, notices, and `close()`. */
export interface McpConnection {
  readonly name: string;
  readonly config: McpServerConfig;
  /** Why the connection ended; undefined while it is open. */
  closedReason(): string | undefined;
  /** All the server's tools (following pagination, at most MAX_TOOLS_PER_SERVER). */
  listTools(): Promise<Tool[]>;
  /** Calls a tool; failures of the connection are `TOOL_FAILED` ToolErrors naming the reason. */
  callTool(name: string, args: unknown, options: McpCallOptions): Promise<CallToolResult>;
  /** Why a tool's output schema was refused (the tool is then skipped), if it was. */
  outputSchemaRefused(tool: Tool): string | undefined;
  /** Called on `notifications/tools/list_changed`. */
  onToolsChanged(listener: () => void): void;
  /**
   * Hears harmless protocol events (a late answer or progress notification for a call that was
   * cancelled or timed out): the first MAX_NOTICES, then one saying later ones are not reported.
   * A listener added later hears those already reported.
   */
  onNotice(listener: (message: string) => void): void;
  /** How many harmless protocol events the server caused (reported or not). */
  noticeCount(): number;
  /**
   * True when the connection was closed because the server sent a message over its limit: the
   * server may be started again (restartingConnection.ts); never after `close()`.
   */
  restartable?(): boolean;
  /** Closes the connection (stops a stdio server). */
  close(): Promise<void>;
}

/** How an MCP server is connected: schema limits, how dsh introduces itself, timeouts and the sandbox of stdio servers. */
export interface ConnectOptions {
  schemaLimits?: SchemaLimits;
  /** How dsh introduces itself in `initialize` (default `{ name: 'dsh', version: '0' }`). */
  clientInfo?: { name: string; version: string };
  /** The workspace a server with `"sandbox"` is confined to (required for such a server). */
  workspaceRoot?: string;
}

/** The absolute program for `command` (a path, or a name looked up on PATH), as the sandbox needs. */
function resolveProgram(command: string, path: string | undefined, cwd: string): string {
  if (command.includes('/')) return resolve(cwd, command);
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(`command ${JSON.stringify(command)} not found on PATH`);
}

function describe(e: unknown): string {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return 'unknown error';
  }
}

/** Connects and initializes within the server's start-up limit; rejects with the reason otherwise. */
export async function connectMcpServer(name: string, config: McpServerConfig, options: ConnectOptions = {}): Promise<McpConnection> {
  const startupMs = config.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
  const callTimeoutMs = config.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const validator = createOutputValidator(options.schemaLimits);
  const client = new Client(options.clientInfo ?? { name: 'dsh', version: '0' }, { capabilities: {}, jsonSchemaValidator: validator });
  let stderrTail = '';
  let transport: Transport;
  const bounded = isStdioServer(config)
    ? undefined
    : boundHttpAnswers({ maxMessageBytes: config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, maxResponseBytes: config.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES });
  let sandbox: Sandbox | undefined;
  let sandboxed: SandboxedCommand | undefined;
  if (isStdioServer(config) && config.sandbox !== undefined) {
    // In the OS sandbox, as bash: the server's own env passes (it is the user's explicit choice),
    // dsh's secrets do not.
    const root = options.workspaceRoot;
    if (root === undefined) throw new Error('"sandbox" needs the workspace root (attachMcpServers(rt, servers, { workspaceRoot }))');
    const env = { ...getDefaultEnvironment(), ...config.env };
    sandbox = createSandbox({ mode: config.sandbox, root, network: config.network === true, env, passEnv: Object.keys(config.env ?? {}) });
    const cwd = config.cwd !== undefined ? resolve(root, config.cwd) : root;
    try {
      sandboxed = await sandbox.wrap([resolveProgram(config.command, env.PATH, cwd), ...(config.args ?? [])], { cwd });
    } catch (e) {
      await sandbox.dispose().catch(() => {});
      throw new Error(`cannot run in the sandbox (${config.sandbox}): ${describe(e)}`);
    }
  }
  if (isStdioServer(config)) {
    // Bounded (boundedStdio.ts): linear reads, a line over the limit fails at once, no stall
    // under a storm of notifications, and close() leaves no process of the server's.
    const stdio = new BoundedStdioTransport({
      command: sandboxed?.file ?? config.command,
      args: sandboxed ? [...sandboxed.args] : (config.args ?? []),
      env: sandboxed?.env ?? { ...getDefaultEnvironment(), ...config.env },
      ...(sandboxed ? { cwd: sandboxed.cwd } : config.cwd !== undefined ? { cwd: config.cwd } : {}),
      maxMessageBytes: config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    });
    // Read continuously (a full pipe would block the server); keep the tail for error reasons.
    stdio.stderr.on('data', (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    transport = stdio;
  } else {
    transport = new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers ?? {} }, fetch: bounded!.fetch });
  }
  const withStderr = (reason: string) => (stderrTail.trim() ? `${reason} (stderr: ${stderrTail.trim().slice(-500)})` : reason);

  let closed: string | undefined;
  let closing = false;
  let tooLarge = false;
  client.onclose = () => {
    bounded?.close();
    closed ??= withStderr(closing ? 'the connection was closed' : isStdioServer(config) ? 'the server process exited' : 'the connection was lost');
  };

  // Heard before the client: the client wraps these handlers and calls them first (Protocol.connect).
  let transportError: unknown;
  transport.onerror = (e) => {
    transportError = e;
  };
  transport.onmessage = (message) => {
    const ended = bounded?.observe(message);
    if (!ended) return;
    // An answer stream broke: its calls fail now, after every event it carried was handled.
    for (const answer of ended.answers) transport.onmessage?.(answer);
    if (ended.kind === 'cut') probe(ended.reason);
  };

  const notices: string[] = [];
  const noticeListeners: Array<(message: string) => void> = [];
  let noticeCount = 0;
  const notice = (what: string) => {
    noticeCount++;
    if (noticeCount > MAX_NOTICES + 1) return;
    const message =
      noticeCount <= MAX_NOTICES ? `MCP server "${name}": ${what}` : `MCP server "${name}": more than ${MAX_NOTICES} harmless protocol events; later ones are not reported`;
    notices.push(message);
    for (const l of noticeListeners) l(message);
  };

  // Over HTTP a broken stream may mean the server is gone. If it no longer answers a ping, close,
  // so pending calls fail now and later ones fail fast.
  let probing = false;
  const probe = (what: string) => {
    if (probing || closing || closed) return;
    probing = true;
    client
      .ping({ timeout: Math.min(startupMs, 10_000) })
      .then(
        () => undefined,
        (pingError: unknown) => {
          if (closing || closed) return;
          closed = `the server stopped answering (${what}; ping: ${describe(pingError).slice(0, 200)})`;
          void client.close().catch(() => {});
        },
      )
      .finally(() => (probing = false));
  };

  client.onerror = (e) => {
    const fromTransport = e === transportError;
    transportError = undefined;
    if (closing || closed) return;
    const what = describe(e).slice(0, 300);
    if (!fromTransport) {
      // The protocol layer: an answer or progress for a request no longer waited for (MCP allows
      // these after a cancel), an error in a notification handler. The stream itself is sound.
      return notice(what);
    }
    if (isStdioServer(config)) {
      // Over stdio every transport error is the stream itself (bytes that are not JSON-RPC, a line
      // over the limit, a failed pipe): nothing more can be trusted on it, so it is closed and
      // pending calls fail with the reason.
      closed = withStderr(`the server sent malformed data (${what})`);
      if (e instanceof MessageTooLargeError) tooLarge = true;
      void client.close().catch(() => {});
      return;
    }
    if (/SSE stream disconnected|reconnect/i.test(what)) probe(what);
  };

  const close = async () => {
    closing = true;
    closed ??= 'the connection was closed';
    bounded?.close();
    await client.close().catch(() => {});
    if (sandbox) {
      const box = sandbox;
      sandbox = undefined;
      await sandboxed?.finish().catch(() => []);
      await box.dispose().catch(() => {});
    }
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not start within ${startupMs} ms`)), startupMs);
  });
  try {
    await Promise.race([client.connect(transport, { timeout: startupMs }), deadline]);
  } catch (e) {
    await close();
    throw new Error(withStderr(e instanceof McpError && e.code === McpErrorCode.RequestTimeout ? `did not start within ${startupMs} ms` : describe(e)));
  } finally {
    clearTimeout(timer);
  }

  const toolsChanged: Array<() => void> = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    for (const l of toolsChanged) l();
  });

  return {
    name,
    config,
    closedReason: () => closed,
    async listTools() {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: startupMs });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor && tools.length < MAX_TOOLS_PER_SERVER);
      return tools.slice(0, MAX_TOOLS_PER_SERVER);
    },
    async callTool(tool, args, { signal, onProgress }) {
      if (closed) throw new ToolError(ErrorCode.TOOL_FAILED, `MCP server "${name}" is not connected: ${closed}`);
      try {
        return (await client.callTool({ name: tool, arguments: args as Record<string, unknown> }, CallToolResultSchema, {
          signal,
          timeout: callTimeoutMs,
          ...(onProgress ? { onprogress: onProgress, resetTimeoutOnProgress: false } : {}),
        })) as CallToolResult;
      } catch (e) {
        if (signal.aborted) throw e; // the pipeline reports the abort (ABORTED, or its TIMEOUT)
        if (e instanceof McpError && e.code === McpErrorCode.RequestTimeout) {
          throw new ToolError(ErrorCode.TIMEOUT, `"${tool}" on MCP server "${name}" did not answer within ${callTimeoutMs} ms (cancelled on the server)`);
        }
        if (closed) throw new ToolError(ErrorCode.TOOL_FAILED, `MCP server "${name}" failed during the call: ${closed}`);
        if (e instanceof McpError && e.code === STREAM_ENDED_CODE && (e.data as { dshAnswerStream?: unknown } | undefined)?.dshAnswerStream !== undefined) {
          // Failed here when its answer stream broke (boundedHttp.ts): the reason without the SDK's prefix.
          throw new ToolError(ErrorCode.TOOL_FAILED, `"${tool}" on MCP server "${name}" failed: ${e.message.replace(/^MCP error -?\d+: /, '').slice(0, 1000)}`);
        }
        throw new ToolError(ErrorCode.TOOL_FAILED, `"${tool}" on MCP server "${name}" failed: ${describe(e).slice(0, 1000)}`);
      }
    },
    outputSchemaRefused: (tool) => (tool.outputSchema ? validator.refused.get(tool.outputSchema) : undefined),
    onToolsChanged: (l) => void toolsChanged.push(l),
    onNotice: (l) => {
      noticeListeners.push(l);
      for (const m of notices) l(m);
    },
    noticeCount: () => noticeCount,
    restartable: () => tooLarge && !closing,
    close,
  };
}
