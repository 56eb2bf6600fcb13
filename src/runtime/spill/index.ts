export * from './spillStore.js';
export * from './lineIndex.js';
export * from './spilledLines.js';
export * from './spilledResult.js';
export * from './memorySpillStore.js';
export * from './spillPolicy.js';
export * from './utf8.js';
