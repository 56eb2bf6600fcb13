/**
 * dsh/policies: the config policies that match with RE2 (browser-safe). Path globs, permission
 * rules, bash deny patterns, and `applyConfig`, which installs them with plan mode. They are not in
 * `dsh` because re2js (~46 KB gzipped) would double that entry's browser bundle; `dsh/node`
 * re-exports them.
 */
export * from './runtime/policies/pathGlob.js';
export * from './runtime/policies/permissionRules.js';
export * from './runtime/policies/bashDenyGuard.js';
export * from './runtime/policies/shellCommands.js';
export * from './runtime/policies/commandRules.js';
export * from './runtime/policies/applyConfig.js';
export * from './runtime/policies/askBeforeChanges.js';
export * from './runtime/policies/configuredPolicies.js';
export * from './runtime/policies/commandHooks.js';
export * from './runtime/policies/hookExamples.js';
export * from './protocol/hookMessages.js';
export * from './runtime/policies/policyCheck.js';
export * from './runtime/policies/ruleExamples.js';
