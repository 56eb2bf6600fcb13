/**
 * The default question and the config's policies as `dsh run` installs them (configuredPolicies.ts,
 * askBeforeChanges.ts; docs/configuration.md `askBefore`, docs/policies.md): a call of `write`,
 * `edit` or `bash` that no rule or hook decided is asked about, with a reason saying what the model
 * wants; `askBefore` replaces that list (`[]` asks about none); `--allow TOOL` takes a tool off it;
 * a rule that decides first is not overridden; the remover takes every listener away. The same
 * policies judged by a policy checker (what `dsh policy test` and `dsh policy replay` use) give the
 * same answers.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import type { PolicyConfig } from '../../../src/runtime/policies/applyConfig.js';
import { ASK_BEFORE_CHANGES, askBeforeChanges, DEFAULT_ASK_BEFORE } from '../../../src/runtime/policies/askBeforeChanges.js';
import { configuredPolicies } from '../../../src/runtime/policies/configuredPolicies.js';
import { createPolicyChecker } from '../../../src/runtime/policies/policyCheck.js';
import { call, fakeBash, pathTool, recordingApproval } from './fixtures.js';

const RUN = 'the model wants to run a command';
const CHANGE = 'the model wants to change a file';

/** A runtime with `bash`, `write`, `edit`, `read` and `deploy` stand-ins, an approver saying yes, and the configured policies. */
function setup(config: PolicyConfig = {}, allow?: readonly string[]) {
  const bash = fakeBash();
  const tools = { write: pathTool('write'), edit: pathTool('edit'), read: pathTool('read', { readOnly: true }), deploy: pathTool('deploy') };
  const approval = recordingApproval('allowed-once');
  const rt = createRuntime({ tools: [bash.tool, ...Object.values(tools).map((t) => t.tool)], approval: approval.service });
  const remove = configuredPolicies(rt, config, { root: '/ws', ...(allow ? { allow } : {}) });
  const askedAbout = () => approval.asked.map((a) => `${a.toolName}: ${a.reason}`);
  return { rt, bash, tools, remove, askedAbout };
}

describe('the default question (askBeforeChanges)', () => {
  it('asks before write, edit and bash by default, saying what the model wants; read and other tools run unasked', async () => {
    expect(DEFAULT_ASK_BEFORE).toEqual(['write', 'edit', 'bash']);
    const { rt, bash, tools, askedAbout } = setup();
    for (const [tool, input] of [
      ['bash', { command: 'make' }],
      ['write', { path: 'a.ts' }],
      ['edit', { path: 'b.ts' }],
      ['read', { path: 'c.ts' }],
      ['deploy', { path: 'prod' }],
    ] as const) {
      const r = await call(rt, tool, input);
      expect(r.isError, `${tool}: ${r.content}`).toBe(false);
    }
    expect(askedAbout()).toEqual([`bash: ${RUN}`, `write: ${CHANGE}`, `edit: ${CHANGE}`]);
    expect(bash.ran).toEqual(['make']);
    expect(tools.deploy.ran).toEqual(['prod']);
  });

  it('the default question is registered as ask-before-changes: ordered by that name, it runs where it is put', async () => {
    expect(ASK_BEFORE_CHANGES).toBe('ask-before-changes');
    const first = setup();
    first.rt.hooks.on('tools/pre-execute', 'mine', (c, next) => (c.toolName === 'write' ? { kind: 'allow' } : next()));
    first.rt.hooks.order('tools/pre-execute', ['ask-before-changes', 'mine']);
    expect((await call(first.rt, 'write', { path: 'a.ts' })).isError).toBe(false);
    expect(first.askedAbout()).toEqual([`write: ${CHANGE}`]);
    const second = setup();
    second.rt.hooks.on('tools/pre-execute', 'mine', (c, next) => (c.toolName === 'write' ? { kind: 'allow' } : next()));
    second.rt.hooks.order('tools/pre-execute', ['mine', 'ask-before-changes']);
    expect((await call(second.rt, 'write', { path: 'a.ts' })).isError).toBe(false);
    expect(second.askedAbout()).toEqual([]);
  });

  it('a refusal of the question is APPROVAL_DENIED: the body does not run', async () => {
    const approval = recordingApproval('denied');
    const w = pathTool('write');
    const rt = createRuntime({ tools: [w.tool], approval: approval.service });
    configuredPolicies(rt, {});
    expect((await call(rt, 'write', { path: 'a' })).error?.code).toBe('APPROVAL_DENIED');
    expect(w.ran).toEqual([]);
    expect(approval.asked.map((a) => a.reason)).toEqual([CHANGE]);
  });

  it('askBefore replaces the list: a tool it names is asked about (any tool but bash "changes a file"), the defaults it leaves out are not', async () => {
    const { rt, askedAbout } = setup({ askBefore: ['deploy', 'bash'] });
    await call(rt, 'write', { path: 'a' });
    await call(rt, 'edit', { path: 'a' });
    await call(rt, 'deploy', { path: 'prod' });
    await call(rt, 'bash', { command: 'ls' });
    expect(askedAbout()).toEqual([`deploy: ${CHANGE}`, `bash: ${RUN}`]);
  });

  it('askBefore [] asks about none', async () => {
    const { rt, askedAbout, bash } = setup({ askBefore: [] });
    await call(rt, 'write', { path: 'a' });
    await call(rt, 'bash', { command: 'ls' });
    expect(askedAbout()).toEqual([]);
    expect(bash.ran).toEqual(['ls']);
  });

  it('--allow TOOL: a pre-approved tool is not asked about, the others still are', async () => {
    const { rt, askedAbout, bash } = setup({}, ['bash']);
    await call(rt, 'bash', { command: 'ls' });
    await call(rt, 'write', { path: 'a' });
    expect(askedAbout()).toEqual([`write: ${CHANGE}`]);
    expect(bash.ran).toEqual(['ls']);
    const both = setup({ askBefore: ['deploy', 'write'] }, ['deploy']);
    await call(both.rt, 'deploy', { path: 'x' });
    await call(both.rt, 'write', { path: 'x' });
    expect(both.askedAbout()).toEqual([`write: ${CHANGE}`]);
  });

  it('used alone, with no options: the default list', async () => {
    const approval = recordingApproval('allowed-once');
    const b = fakeBash();
    const rt = createRuntime({ tools: [b.tool], approval: approval.service });
    rt.hooks.on('tools/pre-execute', ASK_BEFORE_CHANGES, askBeforeChanges());
    await call(rt, 'bash', { command: 'ls' });
    expect(approval.asked.map((a) => a.reason)).toEqual([RUN]);
  });
});

describe('configuredPolicies: the config first, then the default question', () => {
  it('a permission allow decides first: no question; a deny rule is POLICY_DENIED, no question either', async () => {
    const { rt, askedAbout, tools } = setup({
      permissions: [
        { tool: 'write', path: 'src/**', decision: 'allow' },
        { tool: 'write', path: '.env', decision: 'deny', reason: 'no secrets' },
      ],
    });
    expect((await call(rt, 'write', { path: 'src/a.ts' })).isError).toBe(false);
    const denied = await call(rt, 'write', { path: '.env' });
    expect(denied.error?.code).toBe('POLICY_DENIED');
    expect(denied.content).toContain('no secrets');
    await call(rt, 'write', { path: 'docs/x.md' });
    expect(askedAbout()).toEqual([`write: ${CHANGE}`]);
    expect(tools.write.ran).toEqual(['src/a.ts', 'docs/x.md']);
  });

  it('plan mode of the config denies a write before the default question is reached', async () => {
    const { rt, askedAbout, tools } = setup({ plan: true });
    const r = await call(rt, 'write', { path: 'a' });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain('plan mode');
    expect(askedAbout()).toEqual([]);
    expect(tools.write.ran).toEqual([]);
  });

  it('the remover takes the config\'s policies and the default question away', async () => {
    const { rt, askedAbout, remove, tools } = setup({ permissions: [{ tool: 'deploy', decision: 'deny' }] });
    expect((await call(rt, 'deploy', { path: 'x' })).error?.code).toBe('POLICY_DENIED');
    remove();
    expect((await call(rt, 'deploy', { path: 'x' })).isError).toBe(false);
    expect((await call(rt, 'write', { path: 'y' })).isError).toBe(false);
    expect(askedAbout()).toEqual([]);
    expect(tools.deploy.ran).toEqual(['x']);
    expect(tools.write.ran).toEqual(['y']);
  });

  it('a policy checker over the configured policies judges a call as dsh run would', async () => {
    const checker = await createPolicyChecker({ install: (rt) => void configuredPolicies(rt, { askBefore: ['write', 'bash'], permissions: [{ tool: 'bash', decision: 'deny', reason: 'no shell' }] }, { allow: ['write'] }), readOnlyTools: new Set(['read']) });
    try {
      expect(await checker.check({ toolName: 'write', input: { path: 'a' } })).toEqual({ outcome: 'allow' });
      expect(await checker.check({ toolName: 'edit', input: { path: 'a' } })).toEqual({ outcome: 'allow' });
      expect(await checker.check({ toolName: 'bash', input: { command: 'ls' } })).toMatchObject({ outcome: 'deny', code: 'POLICY_DENIED' });
      const plain = await createPolicyChecker({ install: (rt) => void configuredPolicies(rt, {}) });
      try {
        expect(await plain.check({ toolName: 'edit', input: { path: 'a' } })).toEqual({
          outcome: 'ask',
          decision: { stage: 'approval', outcome: 'allow', by: 'the person' },
          reason: CHANGE,
        });
        expect(await plain.check({ toolName: 'bash', input: { command: 'ls' } })).toMatchObject({ outcome: 'ask', reason: RUN });
      } finally {
        await plain.close();
      }
    } finally {
      await checker.close();
    }
  });
});
