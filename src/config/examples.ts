/**
 * The examples a config's rules carry, checked against the config's own rules (ruleExamples.ts):
 * when the config loads (a failing example is a ConfigError naming the rule and the example) and
 * by `dsh policy test`. Command hooks are not run here: their entries carry examples of their own.
 */
import { builtinToolNames } from '../adapters/tools/builtinTools.js';
import type { PolicyConfig } from '../runtime/policies/applyConfig.js';
import { configuredPolicies } from '../runtime/policies/configuredPolicies.js';
import { createPolicyChecker } from '../runtime/policies/policyCheck.js';
import { checkExamples, examplesOf, type ExampleFailure } from '../runtime/policies/ruleExamples.js';

/** How many examples the config carries, and the ones its rules decide otherwise. */
export async function checkConfigExamples(config: PolicyConfig, root: string): Promise<{ checked: number; failures: ExampleFailure[] }> {
  const examples = examplesOf(config);
  if (examples.length === 0) return { checked: 0, failures: [] };
  // The rules alone: command hooks carry examples of their own (hookChecks.ts, run in the sandbox).
  const { hooks: _hooks, ...rules } = config;
  // Judged as `dsh run` judges a call with this config: its rules, then the default question.
  const checker = await createPolicyChecker({ install: (rt) => void configuredPolicies(rt, rules, { root }), readOnlyTools: builtinToolNames().readOnly });
  try {
    return { checked: examples.length, failures: await checkExamples(examples, checker) };
  } finally {
    await checker.close();
  }
}
