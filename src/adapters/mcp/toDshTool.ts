/**
 * One MCP tool as a dsh tool: namespaced `server__tool`, the server's description, its input
 * checked against the tool's own JSON Schema at validation (`INVALID_ARGS` with the schema error,
 * before any pre-execute listener sees the call), exclusive unless the configuration trusts it,
 * and its result mapped by resultMapping.ts. Everything else (hooks, guards, spill, timeouts,
 * error codes) is the ordinary pipeline.
 */
import * as z from 'zod';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { defineTool, type AnyTool, type ExecContext } from '../../runtime/defineTool.js';
import type { McpConnection } from './connect.js';
import { compileJsonSchema, type SchemaLimits } from './jsonSchemaValidator.js';
import { mapCallToolResult, type ResultMappingLimits } from './resultMapping.js';
import { isTrustedConcurrencySafe, MCP_NAME_SEPARATOR } from './serverConfig.js';

/** The name the model sees: `server__tool`, characters dsh does not allow in names replaced by `_`. */
export function namespacedToolName(server: string, tool: string): string {
  return `${server}${MCP_NAME_SEPARATOR}${tool.replace(/[^a-zA-Z0-9_.:-]/g, '_')}`.slice(0, 128);
}

/** A progress update of a running call, as an MCP server sends it. */
export interface McpProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/**
 * Where a call's progress goes: the pipeline's `exec.progress` (logged as coalesced `tool/progress`
 * events; the server's numbers and message are bounded there). A caller that hands the body a
 * context without one (a direct `execute`) gets no progress requested from the server.
 */
function progressSink(exec: ExecContext): ((p: McpProgress) => void) | undefined {
  const sink = (exec as Partial<ExecContext>).progress;
  return typeof sink === 'function' ? (p) => sink({ progress: p.progress, total: p.total, message: p.message }) : undefined;
}

export type ToolConversion = { ok: true; tool: AnyTool } | { ok: false; reason: string };

/** Builds the dsh tool, or says why this MCP tool cannot be offered (its schema is refused). */
export function toDshTool(connection: McpConnection, tool: Tool, options: { schemaLimits?: SchemaLimits; resultLimits?: ResultMappingLimits } = {}): ToolConversion {
  const name = namespacedToolName(connection.name, tool.name);
  const compiled = compileJsonSchema(tool.inputSchema, options.schemaLimits);
  if (!compiled.ok) return { ok: false, reason: `its input schema was refused: ${compiled.reason}` };
  const outputRefused = connection.outputSchemaRefused(tool);
  if (outputRefused) return { ok: false, reason: `its output schema was refused: ${outputRefused}` };
  const check = compiled.check;
  const safe = isTrustedConcurrencySafe(connection.config, tool.name, tool.annotations);
  const where = { server: connection.name, tool: tool.name };
  try {
    return {
      ok: true,
      tool: defineTool({
        name,
        description: tool.description ?? tool.title ?? '',
        input: z.unknown().superRefine((value, ctx) => {
          const error = check(value);
          if (error !== undefined) ctx.addIssue({ code: 'custom', message: `does not match the tool's JSON Schema: ${error}` });
        }),
        inputJsonSchema: tool.inputSchema,
        isConcurrencySafe: () => safe,
        execute: async (args, exec) => {
          const onProgress = progressSink(exec);
          const result = await connection.callTool(tool.name, args, { signal: exec.signal, ...(onProgress ? { onProgress } : {}) });
          return mapCallToolResult(result, where, options.resultLimits);
        },
      }),
    };
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : String(e) };
  }
}
