export * from './schema.js';
export * from './mcpServers.js';
export * from './formatIssue.js';
export * from './load.js';
export * from './examples.js';
