/**
 * `dsh/server`: a session served to web pages over the session wire protocol (docs/protocol.md):
 * `createSessionHandler` (a Fetch API handler), `toNodeListener` (for `node:http`), the sessions it
 * serves (`hostRuntime`, `memorySessionDirectory`, `jsonlSessionDirectory`).
 */
export { createSessionHandler, type Authorize, type SessionDirectory, type SessionHandler, type SessionHandlerOptions } from './sessionHandler.js';
export { hostRuntime, CommandRefused, type HostableRuntime, type HostRuntimeOptions, type HostedSession } from './hostedSession.js';
export { memorySessionDirectory, jsonlSessionDirectory, type JsonlSessionDirectoryOptions } from './sessionDirectories.js';
export { toNodeListener, type FetchHandler, type NodeListenerOptions } from './nodeListener.js';
export { SlowClientError } from './eventStream.js';
export * from '../protocol/wire.js';
export { postgresSessionDirectory, type StoredSessionsOptions } from './storedSessions.js';
