export * from './callPipeline.js';
export * from './toolCall.js';
