/**
 * The one place the schema of an `mcpServers` entry plugs into the config: the MCP adapter's own
 * (`src/adapters/mcp/serverConfig.ts`), so `dsh.config.json` is checked exactly as the servers are
 * started (stdio `{ command, args, env, cwd }` or Streamable HTTP `{ url, headers }`, plus the
 * concurrency trust keys and time limits).
 */
import { McpServerConfigSchema, type McpServerConfig } from '../adapters/mcp/serverConfig.js';

export { McpServerNameSchema, McpServersSchema } from '../adapters/mcp/serverConfig.js';
export const McpServerEntrySchema = McpServerConfigSchema;
export type McpServerEntry = McpServerConfig;
