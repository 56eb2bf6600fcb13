/** Rules that carry their own tests (issue 26 item 2): examples checked through the real pipeline, no body. */
import { describe, expect, it } from 'vitest';
import { applyConfig, type PolicyConfig } from '../../../src/runtime/policies/applyConfig.js';
import { createPolicyChecker } from '../../../src/runtime/policies/policyCheck.js';
import { checkExamples, describeCall, describeFailure, examplesOf } from '../../../src/runtime/policies/ruleExamples.js';

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

  it('lists every example in config order: permissions, then bash.deny, then bash.allow; allow, ask, deny within a rule', () => {
    const config: PolicyConfig = {
      bash: {
        allow: ['^ls', { pattern: '^git (status|diff)', examples: { deny: ['git push'], allow: ['git status'] } }],
        deny: [{ pattern: '^rm\\s', examples: { ask: ['rm -i x'] } }, '^sudo'],
      },
      permissions: [
        { tool: 'edit', decision: 'ask', examples: { deny: [{ tool: 'edit', args: { path: 'b' } }], ask: [{ tool: 'edit', args: { path: 'a' } }] } },
        { tool: 'read', decision: 'allow' },
        { tool: 'write', path: 'src/**', decision: 'allow', examples: { allow: [{ tool: 'write', args: { path: 'src/x' } }] } },
      ],
    };
    expect(examplesOf(config)).toEqual([
      { rule: 'permissions[0] (tool "edit")', call: { toolName: 'edit', input: { path: 'a' } }, expected: 'ask' },
      { rule: 'permissions[0] (tool "edit")', call: { toolName: 'edit', input: { path: 'b' } }, expected: 'deny' },
      { rule: 'permissions[2] (tool "write", path "src/**")', call: { toolName: 'write', input: { path: 'src/x' } }, expected: 'allow' },
      { rule: 'bash.deny[0] /^rm\\s/', call: { toolName: 'bash', input: { command: 'rm -i x' } }, expected: 'ask' },
      { rule: 'bash.allow[1] /^git (status|diff)/', call: { toolName: 'bash', input: { command: 'git status' } }, expected: 'allow' },
      { rule: 'bash.allow[1] /^git (status|diff)/', call: { toolName: 'bash', input: { command: 'git push' } }, expected: 'deny' },
    ]);
    expect(examplesOf({})).toEqual([]);
    expect(examplesOf({ bash: { deny: [{ pattern: '^rm' }], allow: [{ pattern: '^ls' }] }, permissions: [{ tool: 'x', decision: 'deny' }] })).toEqual([]);
  });

  it('bash.allow examples: a covered line runs unasked, an uncovered one is asked about', async () => {
    const failures = await check({ bash: { allow: [{ pattern: '^git status$', examples: { allow: ['git status'], ask: ['git status && git push', 'git push'], deny: ['git status'] } }] } });
    expect(failures.map(describeFailure)).toEqual([
      'bash.allow[0] /^git status$/: example bash {"command":"git status"} should be denied, but: allow (pre-execute allow by dsh:bash-commands (bash.allow: every command matches))',
    ]);
  });

  it('says what each outcome should have been, and why a call that never reached the policies failed', async () => {
    const failures = await check({
      permissions: [
        { tool: 'write', decision: 'deny', examples: { allow: [{ tool: 'write', args: { path: 'a' } }] } },
        { tool: 'read', decision: 'allow', examples: { ask: [{ tool: 'read', args: { path: 'a' } }] } },
        { tool: 'grep', decision: 'allow', examples: { deny: [{ tool: 'grep', args: 'not json' as unknown as Record<string, unknown> }] } },
      ],
    });
    expect(failures.map((f) => [f.expected, f.got.split(' ')[0]])).toEqual([
      ['allow', 'deny'],
      ['ask', 'allow'],
      ['deny', 'invalid'],
    ]);
    const lines = failures.map(describeFailure);
    expect(lines[0]).toMatch(/^permissions\[0\] \(tool "write"\): example write \{"path":"a"\} should be allowed, but: deny \(pre-execute deny by dsh:permissions/);
    expect(lines[1]).toMatch(/^permissions\[1\] \(tool "read"\): example read \{"path":"a"\} should be asked about, but: allow \(pre-execute allow by dsh:permissions/);
    // The raw text is shown as sent, and the failure says why it never reached a policy.
    expect(lines[2]).toMatch(/^permissions\[2\] \(tool "grep"\): example grep not json should be denied, but: invalid \(.+\)$/);
    expect(lines[2]).not.toContain('no rule decided');
  });

  it('a call is shown on one short line: raw text as sent, JSON cut at 160 characters', () => {
    expect(describeCall({ toolName: 'bash', input: '{"command":' })).toBe('bash {"command":');
    const at = (n: number) => ({ toolName: 't', input: { s: 'x'.repeat(n - '{"s":""}'.length) } });
    expect(describeCall(at(160))).toBe(`t ${JSON.stringify(at(160).input)}`);
    const long = describeCall(at(161));
    expect(long).toBe(`t ${JSON.stringify(at(161).input).slice(0, 159)}…`);
    expect(long.length).toBe(2 + 160);
  });
});
