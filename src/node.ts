/** dsh/node: everything in `dsh`, `dsh/policies` and `dsh/telemetry`, plus the Node-only adapters (files, processes). */
export * from './index.js';
export * from './adapters/spill/fsSpillStore.js';
export * from './adapters/tools/index.js';
export * from './adapters/log/index.js';
export * from './adapters/model/providers.js';
export * from './config/index.js';
export * from './adapters/mcp/index.js';
export * from './policies.js';
export * from './adapters/store/index.js';
/** Running a stored session's queued turns (what dsh workers do): Node-side, kept out of the browser entry. */
export * from './runtime/store/sessionTurns.js';
export * from './adapters/sandbox/index.js';
export * from './adapters/hooks/index.js';
export * from './telemetry.js';
