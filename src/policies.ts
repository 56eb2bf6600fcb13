/**
 * `dsh/policies`: the config policies that match with RE2 (browser-safe). Path globs, permission
 * rules, bash deny patterns and command rules, command hooks, and `applyConfig`, which installs
 * them with plan mode. They are not in `dsh` because re2js (~46 KB gzipped) would double that
 * entry's browser bundle; `dsh/node` re-exports them.
 *
 * @example
 * ```ts
 * import { applyConfig } from 'dsh/policies';
 *
 * const rt = createRuntime({ tools });
 * applyConfig(rt, config); // permission rules, bash deny patterns, plan mode, command hooks
 * ```
 *
 * @packageDocumentation
 */

// A whole config's policies, installed on a runtime.
export { applyConfig, runtimeOptionsFromConfig, POLICY_NAMES, type ApplyConfigOptions, type PolicyConfig, type BashPatternEntry } from './runtime/policies/applyConfig.js';
export { configuredPolicies, type ConfiguredPoliciesOptions } from './runtime/policies/configuredPolicies.js';

// Each policy on its own.
export { permissionRules, type PermissionRule, type PermissionDecision, type PermissionRulesOptions } from './runtime/policies/permissionRules.js';
export { bashDenyGuard, type BashDenyGuardOptions, type DenyPattern } from './runtime/policies/bashDenyGuard.js';
export { bashCommandRules, commandApprovalKeys, type BashCommandRulesOptions, type BashDenyCheck, type CommandMatcher } from './runtime/policies/commandRules.js';
export { askBeforeChanges, ASK_BEFORE_CHANGES, DEFAULT_ASK_BEFORE, type AskBeforeChangesOptions } from './runtime/policies/askBeforeChanges.js';
export { compileGlob } from './runtime/policies/pathGlob.js';
export { parseShellCommand, MAX_PARSED_COMMAND_LENGTH, type CommandParse, type CommandLayer, type SimpleCommand } from './runtime/policies/shellCommands.js';

// Command hooks: programs that decide a call, and the versioned messages they read and answer.
export {
  installCommandHooks,
  CommandHookError,
  DEFAULT_COMMAND_HOOK_TIMEOUT_MS,
  type CommandHooksConfig,
  type CommandHookEntry,
  type InstallCommandHooksOptions,
  type InstalledCommandHooks,
  type HookRunner,
  type HookRunRequest,
  type HookRunOutcome,
  type HookCallContext,
  type HookExampleCall,
} from './runtime/policies/commandHooks.js';
export {
  HOOK_MESSAGE_VERSION,
  HookInputSchema,
  HookStageSchema,
  PreExecuteHookAnswerSchema,
  GuardHookAnswerSchema,
  PostExecuteHookAnswerSchema,
  type HookInput,
  type HookStage,
  type PreExecuteHookAnswer,
  type GuardHookAnswer,
  type PostExecuteHookAnswer,
} from './protocol/hookMessages.js';

// Examples that pin what a rule or a hook decides, and a checker that runs calls through policies.
export { checkExamples, describeFailure, type ExampleFailure, type RuleExample, type ExpectedOutcome } from './runtime/policies/ruleExamples.js';
export type { ExampleCall, RuleExamples } from './runtime/policies/exampleTypes.js';
export { checkHookExamples, describeExampleFailure } from './runtime/policies/hookExamples.js';
export { createPolicyChecker, type PolicyChecker, type PolicyCheckerOptions, type PolicyCall, type PolicyOutcome, type PolicyVerdict } from './runtime/policies/policyCheck.js';
