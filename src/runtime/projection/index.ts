export * from './prompt.js';
export * from './compactedText.js';
export * from './promptSize.js';
export * from './turnAnswer.js';
export * from './promptState.js';
