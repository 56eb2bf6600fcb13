export * from './serverConfig.js';
export * from './boundedHttp.js';
export * from './jsonSchemaValidator.js';
export * from './connect.js';
export * from './resultMapping.js';
export * from './toDshTool.js';
export * from './toolSource.js';
