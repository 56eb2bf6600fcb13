/** Rules that carry their own tests (issue 26 item 2): examples checked through the real pipeline, no body. */
import { describe, expect, it } from 'vitest';
import { applyConfig, type PolicyConfig } from '../../../src/runtime/policies/applyConfig.js';
import { createPolicyChecker } from '../../../src/runtime/policies/policyCheck.js';
import { checkExamples, describeFailure, examplesOf } from '../../../src/runtime/policies/ruleExamples.js';

async function check(config: PolicyConfig) {
  const checker = await createPolicyChecker({ install: (rt) => void applyConfig(rt, config, { root: '/ws' }), readOnlyTools: new Set(['read']) });
  try {
    return await checkExamples(examplesOf(config), checker);
  } finally {
    await checker.close();
  }
}

describe('rule examples', () => {
  it('examples that hold: a deny rule, an ask rule, an allow rule and a deny pattern with a near miss', async () => {
    const config: PolicyConfig = {
      permissions: [
        { tool: 'write', path: '.env*', decision: 'deny', examples: { deny: [{ tool: 'write', args: { path: '.env.local' } }], allow: [{ tool: 'write', args: { path: 'src/env.ts' } }] } },
        { tool: 'edit', decision: 'ask', examples: { ask: [{ tool: 'edit', args: { path: 'a.ts' } }] } },
      ],
      bash: { deny: [{ pattern: '^rm\\s', examples: { deny: ['rm -rf build', 'ls && sudo rm -r x', 'echo `rm -r v`'], allow: ['rmdir build', 'echo rm -rf'] } }, '^git push'] },
    };
    expect(examplesOf(config)).toHaveLength(8);
    expect(await check(config)).toEqual([]);
  });

  it('a failing example names the rule, the example, what it should have been and who decided instead', async () => {
    const failures = await check({
      permissions: [
        { tool: 'write', decision: 'allow', examples: { allow: [{ tool: 'write', args: { path: '.env' } }] } },
        { tool: 'write', path: '.env', decision: 'deny', examples: { deny: [{ tool: 'write', args: { path: '.env' } }] } },
      ],
      bash: { deny: [{ pattern: '^rm -rf', examples: { deny: ['rm -r -f build'] } }] },
    });
    expect(failures.map(describeFailure)).toEqual([
      // The first rule shadows the second: the example shows it.
      'permissions[1] (tool "write", path ".env"): example write {"path":".env"} should be denied, but: allow (pre-execute allow by dsh:permissions (permissions[0] (tool "write")))',
      'bash.deny[0] /^rm -rf/: example bash {"command":"rm -r -f build"} should be denied, but: allow (no rule decided)',
    ]);
  });

  it('examples see the whole config: plan mode denies a write another rule allows', async () => {
    const failures = await check({ plan: true, permissions: [{ tool: 'write', decision: 'allow', examples: { allow: [{ tool: 'write', args: { path: 'a' } }], deny: [{ tool: 'read', args: { path: 'a' } }] } }] });
    expect(failures.map((f) => [f.expected, f.got.split(' ')[0]])).toEqual([
      ['allow', 'deny'],
      ['deny', 'allow'],
    ]);
    expect(failures[0]!.got).toContain('pre-execute deny by dsh:plan-mode');
  });

  it('hostile examples: a huge command, odd args and a call of an unknown tool are checked like any call, nothing runs', async () => {
    const failures = await check({
      permissions: [{ tool: '*', path: '**', decision: 'ask', examples: { ask: [{ tool: 'anything', args: { path: '../../etc/passwd', nested: { a: [1, { b: null }] } } }] } }],
      bash: { deny: [{ pattern: '^rm\\s', examples: { deny: [`rm ${'x'.repeat(8000)}`, `echo ${'a '.repeat(5000)}`] } }] },
    });
    // A line too long to parse is denied (it cannot be checked), so both deny examples hold.
    expect(failures.map(describeFailure)).toEqual([]);
  });
});
