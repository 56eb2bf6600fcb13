export * from './jsonlStore.js';
export * from './pgStore.js';
