export * from './prompt.js';
export * from './turnAnswer.js';
