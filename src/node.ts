/**
 * `dsh/node`: everything in `dsh`, `dsh/protocol`, `dsh/store`, `dsh/view`, `dsh/inspection`,
 * `dsh/policies` and `dsh/telemetry`, plus the Node-only adapters: the built-in tools and the OS
 * sandbox, file-backed logs, spill and session stores, Postgres, model providers, MCP servers,
 * config files and command hooks. It exports no CLI internals; what is exported is checked against
 * `api/dsh-node.api.md`.
 *
 * @example
 * ```ts
 * import { createBuiltinTools, createRuntime, openJsonlSessionLog, resolveModel } from 'dsh/node';
 *
 * await using session = await openJsonlSessionLog('.dsh/sessions/s1.jsonl');
 * const rt = createRuntime({ tools: createBuiltinTools({ root: process.cwd() }).all, log: session.log });
 * await rt.startTurn({ model: await resolveModel('anthropic:claude-sonnet-4-5'), input: 'list the files' }).done;
 * ```
 *
 * @packageDocumentation
 */
export * from './index.js';
export * from './protocol.js';
export * from './store.js';
export * from './view.js';
export * from './inspection.js';
export * from './policies.js';
export * from './telemetry.js';

// The built-in tools (read, write, edit, grep, glob, bash) on a workspace.
export { createBuiltinTools, builtinToolNames, type BuiltinTools, type BuiltinToolsOptions, type BashSandboxSettings } from './adapters/tools/builtinTools.js';
export { DEFAULT_BASH_TIMEOUT_MS, type BashIsolation, type BashToolOptions } from './adapters/tools/bash.js';
export type { PidNamespaceProbe } from './adapters/tools/pidNamespace.js';

// The OS sandbox for commands (bubblewrap), and the paths it protects.
export { createSandbox, describeSandbox, SandboxUnavailableError, SANDBOX_MODES, type Sandbox, type SandboxMode, type SandboxOptions, type SandboxedCommand, type WrapOptions } from './adapters/sandbox/sandbox.js';
export { probeBwrap, type BwrapProbe } from './adapters/sandbox/bwrapProbe.js';
export type { DenyReadPlan } from './adapters/sandbox/denyRead.js';
export type { Quarantined } from './adapters/sandbox/protectedLayout.js';
export { protectedPaths, protectedBy, userConfigDir, type ProtectedPath, type ProtectedRule, type ProtectedPathsOptions } from './adapters/sandbox/protectedPaths.js';

// Sessions on disk: the JSONL log, its replay, spilled results in files, the lease.
export { openJsonlSessionLog, type OpenJsonlSessionLogOptions, type OpenedJsonlSessionLog } from './adapters/log/jsonlLog.js';
export type { JsonlLogSink, JsonlLogSinkOptions } from './adapters/log/jsonlSink.js';
export { readJsonlLog, replayJsonlLog, JsonlLogError, type JsonlLogErrorCode, type ReplayOptions, type ReplayResult, type TornTail } from './adapters/log/jsonlReplay.js';
export { createFsSpillStore, type FsSpillStore, type FsSpillStoreOptions } from './adapters/spill/fsSpillStore.js';
export { holdSessionLease, SESSION_LEASE_MS, type HeldSessionLease, type HoldSessionLeaseOptions } from './adapters/store/sessionLease.js';

// Session stores: a directory of JSONL sessions, or Postgres with a queue of submitted turns.
export { createJsonlStore, type JsonlSessionStore, type JsonlStoreOptions } from './adapters/store/jsonlStore.js';
export { openPostgresStore, createPostgresStore, migratePostgresStore, type PostgresSessionStore, type PostgresStoreOptions, type PgPoolLike, type PgClientLike } from './adapters/store/pgStore.js';
export { submitTurn, migrateTurnQueue, type SubmittedTurn } from './adapters/store/pgQueue.js';
export { runPendingTurns, type PendingTurn, type RunPendingTurnsOptions, type PendingTurnsResult } from './runtime/store/sessionTurns.js';

// Models from providers ("anthropic:claude-…", "openai:gpt-…").
export { resolveModel, parseModelSpec, ModelResolveError, MODEL_PROVIDERS, type ModelResolveErrorCode, type ModelProviderName, type ModelSpec, type ResolveModelOptions } from './adapters/model/providers.js';

// Tools from MCP servers.
export { attachMcpServers, createMcpToolSource, type McpToolSource, type McpToolSourceOptions, type McpSkip } from './adapters/mcp/toolSource.js';
export { parseMcpServers, McpServersSchema, McpServerConfigSchema, McpStdioServerSchema, McpHttpServerSchema, type McpServers, type McpServerConfig, type McpStdioServerConfig, type McpHttpServerConfig } from './adapters/mcp/serverConfig.js';
export type { ConnectOptions, McpCallOptions, McpConnection } from './adapters/mcp/connect.js';
export type { SchemaLimits } from './adapters/mcp/jsonSchemaValidator.js';
export type { ResultMappingLimits } from './adapters/mcp/resultMapping.js';

// Config files (dsh.config.json), and command hooks run in the sandbox.
export { loadConfig, parseConfig, mergeConfigs, ConfigError, PROJECT_CONFIG_FILE, USER_CONFIG_FILE, userConfigPath, type LoadConfigOptions, type LoadedConfig } from './config/load.js';
export { DshConfigSchema, type DshConfig } from './config/schema.js';
export type { ServerOrigin } from './config/serverTrust.js';
export { createHookRunner, type HookRunnerOptions } from './adapters/hooks/hookRunner.js';
