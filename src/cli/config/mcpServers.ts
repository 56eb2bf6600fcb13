/**
 * The one place the schema of an `mcpServers` entry plugs into the config. The MCP adapter
 * (src/adapters/mcp/) owns that schema; until it is wired here, an entry is validated loosely:
 * any JSON object (its keys are kept as they are, for the adapter to validate when it starts the
 * server). To plug the exact schema in, replace `McpServerEntrySchema` with the adapter's.
 */
import { z } from 'zod';

export const McpServerEntrySchema = z.looseObject({});
export type McpServerEntry = z.infer<typeof McpServerEntrySchema>;

/** Server names: what tool names are built from, so kept to a safe alphabet. */
export const McpServerNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'a server name is 1 to 64 of A-Z a-z 0-9 _ -')
  .refine((n) => n !== '__proto__' && n !== 'constructor' && n !== 'prototype', 'this server name is reserved');

export const McpServersSchema = z.record(McpServerNameSchema, McpServerEntrySchema);
