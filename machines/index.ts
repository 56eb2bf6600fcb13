export * from './callPipeline.js';
export * from './commitGate.js';
export * from './modelStream.js';
export * from './scheduler.js';
export * from './step.js';
export * from './toolCall.js';
export * from './turn.js';
export * from './modelCallOptions.js';
