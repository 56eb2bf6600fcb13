/** dsh/node: everything in `dsh`, plus the Node-only adapters (files, processes). */
export * from './index.js';
