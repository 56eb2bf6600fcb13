/**
 * The policies of a config as `dsh run` runs them, in one function (issue 32 item 1): the config's
 * own (`applyConfig`: plan mode, command rules, permission rules, command hooks, the guards) and,
 * last, the default question (`askBeforeChanges`). `dsh run`, `dsh resume`, the inspector page,
 * `dsh policy test` (rule examples) and `dsh policy replay` all build their policies here, so they
 * agree about every call. Browser-safe.
 */
import type { Runtime } from '../createRuntime.js';
import { applyConfig, type ApplyConfigOptions, type PolicyConfig } from './applyConfig.js';
import { ASK_BEFORE_CHANGES, askBeforeChanges } from './askBeforeChanges.js';

/** How `configuredPolicies` installs a config and the CLI's default question. */
export interface ConfiguredPoliciesOptions extends ApplyConfigOptions {
  /** Tools pre-approved for this run (`--allow TOOL`): the default question does not ask about them. */
  readonly allow?: readonly string[];
}

/** Installs the default question, then the config's policies (ordered before it); returns the remover. */
export function configuredPolicies(rt: Pick<Runtime, 'hooks' | 'tools'>, config: PolicyConfig, options: ConfiguredPoliciesOptions = {}): () => void {
  const { allow, ...applyOptions } = options;
  const removeDefault = rt.hooks.on('tools/pre-execute', ASK_BEFORE_CHANGES, askBeforeChanges({ ...(config.askBefore ? { tools: config.askBefore } : {}), ...(allow ? { preApproved: allow } : {}) }));
  const removeConfig = applyConfig(rt, config, applyOptions);
  return () => {
    removeConfig();
    removeDefault();
  };
}
