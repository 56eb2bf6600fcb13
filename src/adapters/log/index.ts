export * from './jsonlLog.js';
