export * from './prompt.js';
