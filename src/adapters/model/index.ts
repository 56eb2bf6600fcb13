export * from './scriptedModel.js';
export * from './modelErrors.js';
