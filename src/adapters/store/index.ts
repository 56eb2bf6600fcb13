export * from './jsonlStore.js';
export * from './pgStore.js';
export * from './pgQueue.js';
export * from './sessionLease.js';
export * from './pgAnswers.js';
