/** dsh: browser-safe entry point (no Node imports). Node-only adapters live in `dsh/node`. */
export * from './protocol/index.js';
export * from './runtime/index.js';
export * from './view/index.js';
export * from './adapters/model/index.js';
export * from '../machines/index.js';
