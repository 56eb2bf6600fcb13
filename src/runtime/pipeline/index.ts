export * from './approval.js';
export * from './approvalService.js';
export * from './callStages.js';
export * from './stageDeps.js';
export * from './progress.js';
