export * from './errorCodes.js';
export * from './results.js';
export * from './decisions.js';
export * from './events.js';
export * from './usage.js';
