export * from './spill.js';
export * from './utf8.js';
export * from './toolPath.js';
export * from './pathGlob.js';
export * from './permissionRules.js';
export * from './bashDenyGuard.js';
export * from './planMode.js';
export * from './applyConfig.js';
