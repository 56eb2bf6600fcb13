/**
 * `dsh/store`: where a session's log and its oversized results are kept, as ports you can implement
 * for your own database. The session store (conditional appends under a lease), a session opened on
 * a store, and the spill store with its in-memory implementation. Browser-safe; the JSONL and
 * Postgres stores are in `dsh/node`.
 *
 * @example
 * ```ts
 * import { createRuntime } from 'dsh';
 * import { createMemorySpillStore } from 'dsh/store';
 *
 * const rt = createRuntime({ tools: [], spillStore: createMemorySpillStore() });
 * ```
 *
 * @packageDocumentation
 */

// Spilled results: where oversized results are kept.
export { createMemorySpillStore, type MemorySpillStore, type MemorySpillStoreOptions } from './runtime/spill/memorySpillStore.js';
export type { SpillLineIndex } from './runtime/spill/lineIndex.js';
export type { SpillStore, SpillMeta, SpillSaveOptions, SpillRange, SpillChunk } from './runtime/spill/spillStore.js';
export { spillReferenceOf, type SpillReference } from './runtime/spill/spilledResult.js';

// Stored sessions: the store port, leases, a session opened on a store.
export { StoreConflictError, type SessionStore, type Lease, type StoreConflictCode } from './runtime/store/sessionStore.js';
export { openStoredSession, openStoredSessionLog, type OpenStoredSessionOptions, type HoldStoredSessionOptions, type OpenedStoredSession, type LeaseKeeper } from './runtime/store/storedSession.js';
export type { StoreSink, StoreSinkOptions } from './runtime/store/storeSink.js';
