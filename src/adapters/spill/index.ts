// Browser-safe spill pieces only; the filesystem store is exported from `dsh/node`.
export * from './memorySpillStore.js';
export * from './spillStore.js';
