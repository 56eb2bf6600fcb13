export * from './errorCodes.js';
export * from './results.js';
export * from './decisions.js';
export { describeProvenance } from './describeProvenance.js';
export * from './events.js';
export * from './usage.js';
export * from './describeThrown.js';
export { visible, hasControlCharacters } from './visibleText.js';
