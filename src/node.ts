/** dsh/node: everything in `dsh`, plus the Node-only adapters (files, processes). */
export * from './index.js';
// Browser-safe, but not yet re-exported by `./index.js`; harmless to repeat once it is.
export * from './adapters/spill/index.js';
export * from './runtime/policies/index.js';
export * from './adapters/spill/fsSpillStore.js';
export * from './adapters/tools/index.js';
