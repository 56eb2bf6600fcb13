/**
 * The tools of a set of MCP servers, connected in parallel. A server that fails to start (or takes
 * longer than its start-up limit) is reported and skipped; the others still work. `attachMcpServers`
 * puts them into a runtime: registered as ordinary dsh tools, refreshed on `listChanged` between
 * steps (never mid-batch), and closed with the runtime.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AnyTool } from '../../runtime/defineTool.js';
import type { Runtime } from '../../runtime/createRuntime.js';
import { connectMcpServer, type ConnectOptions, type McpConnection } from './connect.js';
import type { SchemaLimits } from './jsonSchemaValidator.js';
import type { ResultMappingLimits } from './resultMapping.js';
import { parseMcpServers, type McpServers } from './serverConfig.js';
import { restartingConnection } from './restartingConnection.js';
import { toDshTool } from './toDshTool.js';

/** A server or one of its tools that is not offered, and why. */
export interface McpSkip {
  readonly server: string;
  readonly tool?: string;
  readonly reason: string;
}

/** How MCP servers' tools are made: connection options, schema and result limits. */
export interface McpToolSourceOptions extends ConnectOptions {
  schemaLimits?: SchemaLimits;
  resultLimits?: ResultMappingLimits;
}

/** The tools of a set of MCP servers, kept current as they change, and the connections' `close()`. */
export interface McpToolSource {
  /** Every offered tool of every connected server. */
  tools(): AnyTool[];
  /** The tools of one server. */
  toolsOf(server: string): AnyTool[];
  /** Servers and tools left out, with the reason. */
  readonly skipped: readonly McpSkip[];
  /** The live connections by server name. */
  readonly connections: ReadonlyMap<string, McpConnection>;
  /** Called after a server's tool list changed and was read again (with that server's new tools and skips). */
  onToolsChanged(listener: (server: string, tools: AnyTool[], skipped: McpSkip[]) => void): void;
  /** Closes every connection (stdio servers are stopped). */
  close(): Promise<void>;
}

function convert(connection: McpConnection, listed: Tool[], options: McpToolSourceOptions): { tools: AnyTool[]; skipped: McpSkip[] } {
  const tools: AnyTool[] = [];
  const skipped: McpSkip[] = [];
  const names = new Set<string>();
  for (const t of listed) {
    const made = toDshTool(connection, t, options);
    if (!made.ok) skipped.push({ server: connection.name, tool: t.name, reason: made.reason });
    else if (names.has(made.tool.name)) skipped.push({ server: connection.name, tool: t.name, reason: `its name "${made.tool.name}" is taken by another tool of the same server` });
    else {
      names.add(made.tool.name);
      tools.push(made.tool);
    }
  }
  return { tools, skipped };
}

/** Connects to every enabled server at once and reads their tools. Never rejects for a server's failure. */
export async function createMcpToolSource(servers: McpServers, options: McpToolSourceOptions = {}): Promise<McpToolSource> {
  const config = parseMcpServers(servers);
  const connections = new Map<string, McpConnection>();
  const toolsByServer = new Map<string, AnyTool[]>();
  const skipped: McpSkip[] = [];
  const listeners: Array<(server: string, tools: AnyTool[], skipped: McpSkip[]) => void> = [];

  await Promise.all(
    Object.entries(config).map(async ([name, entry]) => {
      if (entry.disabled) return void skipped.push({ server: name, reason: 'disabled in the configuration' });
      let connection: McpConnection;
      try {
        // Started again after a message over its limit (restartingConnection.ts).
        connection = restartingConnection(await connectMcpServer(name, entry, options), () => connectMcpServer(name, entry, options));
      } catch (e) {
        return void skipped.push({ server: name, reason: `failed to start: ${e instanceof Error ? e.message : String(e)}` });
      }
      let listed: Tool[];
      try {
        listed = await connection.listTools();
      } catch (e) {
        await connection.close();
        return void skipped.push({ server: name, reason: `failed to list its tools: ${e instanceof Error ? e.message : String(e)}` });
      }
      const made = convert(connection, listed, options);
      connections.set(name, connection);
      toolsByServer.set(name, made.tools);
      skipped.push(...made.skipped);
      // Re-read on listChanged, coalesced: one read at a time per server, and every notice that
      // arrives during a read asks for one more read after it, not one each (a storm of 10,000 is
      // at most two reads).
      let reading = false;
      let again = false;
      const refresh = async () => {
        reading = true;
        try {
          do {
            again = false;
            let next: { tools: AnyTool[]; skipped: McpSkip[] };
            try {
              next = convert(connection, await connection.listTools(), options);
            } catch (e) {
              next = { tools: toolsByServer.get(name) ?? [], skipped: [{ server: name, reason: `failed to re-read its tools after listChanged: ${e instanceof Error ? e.message : String(e)}` }] };
            }
            toolsByServer.set(name, next.tools);
            for (const l of listeners) l(name, next.tools, next.skipped);
          } while (again && !connection.closedReason());
        } finally {
          reading = false;
        }
      };
      connection.onToolsChanged(() => {
        if (reading) again = true;
        else void refresh();
      });
    }),
  );

  let closing: Promise<void> | undefined;
  return {
    tools: () => [...toolsByServer.values()].flat(),
    toolsOf: (server) => [...(toolsByServer.get(server) ?? [])],
    skipped,
    connections,
    onToolsChanged: (l) => void listeners.push(l),
    close: () => (closing ??= Promise.all([...connections.values()].map((c) => c.close())).then(() => undefined)),
  };
}

/**
 * Connects the servers and registers their tools in `rt`: skipped servers and tools are recorded
 * as `warning` events (`MCP_SERVER_SKIPPED`, `MCP_TOOL_SKIPPED`), `rt.close()` closes them, and a
 * server's `listChanged` replaces its tools between steps.
 */
export async function attachMcpServers(rt: Runtime, servers: McpServers, options: McpToolSourceOptions = {}): Promise<McpToolSource> {
  const source = await createMcpToolSource(servers, options);
  rt.onClose(() => source.close());
  const report = (s: McpSkip) =>
    rt.log.append({
      type: 'warning',
      code: s.tool === undefined ? 'MCP_SERVER_SKIPPED' : 'MCP_TOOL_SKIPPED',
      message: s.tool === undefined ? `MCP server "${s.server}" skipped: ${s.reason}` : `MCP tool "${s.tool}" of server "${s.server}" skipped: ${s.reason}`,
      data: { server: s.server, ...(s.tool !== undefined ? { tool: s.tool } : {}) },
    });
  const registered = new Map<string, string[]>();
  const register = (server: string, tools: AnyTool[]) => {
    const names: string[] = [];
    for (const t of tools) {
      try {
        rt.tools.register(t);
        names.push(t.name);
      } catch (e) {
        report({ server, tool: t.name, reason: e instanceof Error ? e.message : String(e) });
      }
    }
    registered.set(server, names);
  };
  for (const s of source.skipped) report(s);
  for (const server of source.connections.keys()) register(server, source.toolsOf(server));
  // A server's latest tool list waits for the next step; a newer one replaces it (during a long
  // turn a chatty server queues one change, not one per notice).
  const waiting = new Map<string, { tools: AnyTool[]; skipped: McpSkip[] }>();
  source.onToolsChanged((server, tools, skipped) => {
    const queued = waiting.has(server);
    waiting.set(server, { tools, skipped });
    if (queued) return;
    rt.tools.betweenSteps(() => {
      const latest = waiting.get(server);
      waiting.delete(server);
      if (!latest) return;
      for (const name of registered.get(server) ?? []) rt.tools.unregister(name);
      for (const s of latest.skipped) report(s);
      register(server, latest.tools);
    });
  });
  for (const [server, connection] of source.connections) {
    connection.onNotice((message) => rt.log.append({ type: 'warning', code: 'MCP_PROTOCOL_NOTICE', message, data: { server } }));
  }
  return source;
}
