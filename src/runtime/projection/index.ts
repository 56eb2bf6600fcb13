export * from './prompt.js';
export * from './turnAnswer.js';
export * from './promptState.js';
