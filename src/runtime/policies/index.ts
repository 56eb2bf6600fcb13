export * from './spill.js';
export * from './utf8.js';
