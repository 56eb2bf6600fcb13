export * from './sessionStore.js';
export * from './storeSink.js';
export * from './storedSession.js';
