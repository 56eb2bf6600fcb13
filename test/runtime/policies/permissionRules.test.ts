/** Permission rules as a pre-execute listener: first match decides; hostile paths are normalised first. */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { applyConfig } from '../../../src/runtime/policies/applyConfig.js';
import { normaliseToolPath } from '../../../src/runtime/policies/toolPath.js';
import type { PermissionRule } from '../../../src/runtime/policies/permissionRules.js';
import { call, pathTool, recordingApproval } from './fixtures.js';

const ROOT = '/home/u/proj';

function setup(rules: PermissionRule[], answer: 'allowed-once' | 'denied' = 'denied') {
  const read = pathTool('read', { readOnly: true });
  const write = pathTool('write');
  const { service, asked } = recordingApproval(answer);
  const rt = createRuntime({ tools: [read.tool, write.tool], approval: service });
  applyConfig(rt, { permissions: rules }, { root: ROOT });
  return { rt, read, write, asked };
}

describe('normaliseToolPath', () => {
  it.each([
    ['secrets/key', 'secrets/key'],
    ['./secrets/key', 'secrets/key'],
    ['x/../secrets/./key', 'secrets/key'],
    ['secrets//key', 'secrets/key'],
    [`${ROOT}/secrets/key`, 'secrets/key'],
    [`${ROOT}/../proj/secrets/key`, 'secrets/key'],
    ['.', '.'],
    [ROOT, '.'],
  ])('%s → %s', (raw, rel) => {
    expect(normaliseToolPath(raw, ROOT)).toEqual({ inside: true, rel });
  });
  it.each(['../x', 'a/../../x', '/etc/passwd', '/home/u/projector/x', 'a\0b', `${ROOT}/../other/x`])('%s is outside', (raw) => {
    expect(normaliseToolPath(raw, ROOT)).toEqual({ inside: false });
  });
});

describe('permission rules', () => {
  it('a deny rule gives POLICY_DENIED naming the rule and the normalised path; the body never runs', async () => {
    const { rt, read } = setup([{ tool: 'read', path: 'secrets/**', decision: 'deny' }]);
    for (const path of ['secrets/key', './secrets/key', 'src/../secrets/key', `${ROOT}/secrets/key`, 'secrets/.hidden/k']) {
      const r = await call(rt, 'read', { path });
      expect(r.error?.code, path).toBe('POLICY_DENIED');
      expect(r.content).toContain('permission rule 0 (tool "read", path "secrets/**") denies read on "secrets/');
    }
    expect(read.ran).toEqual([]);
    const ok = await call(rt, 'read', { path: 'src/a.ts' });
    expect(ok.isError).toBe(false);
    expect(read.ran).toEqual(['src/a.ts']);
  });

  it('the first matching rule decides: allow before deny lets the call run', async () => {
    const { rt, write } = setup([
      { tool: 'write', path: 'docs/**', decision: 'allow' },
      { tool: 'write', decision: 'deny', reason: 'writes go through review' },
    ]);
    expect((await call(rt, 'write', { path: 'docs/a.md' })).isError).toBe(false);
    const r = await call(rt, 'write', { path: 'src/a.ts' });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain('writes go through review');
    expect(write.ran).toEqual(['docs/a.md']);
  });

  it('an allow rule does not cover a path outside the workspace; a deny rule with a path does', async () => {
    const { rt, write } = setup([
      { tool: 'write', path: '**', decision: 'allow' },
      { tool: 'write', path: 'never/**', decision: 'deny' },
    ]);
    for (const path of ['../escape', '/etc/passwd', 'a/../../escape']) {
      const r = await call(rt, 'write', { path });
      expect(r.error?.code, path).toBe('POLICY_DENIED');
      expect(r.content).toContain('on a path outside the workspace');
    }
    expect(write.ran).toEqual([]);
  });

  it('ask rules reach the approval service with the reason; its answer decides', async () => {
    const { rt, write, asked } = setup([{ tool: 'write', decision: 'ask', reason: 'writing a file' }], 'denied');
    const r = await call(rt, 'write', { path: 'a.txt', text: 'x' });
    expect(asked).toEqual([expect.objectContaining({ toolName: 'write', args: { path: 'a.txt', text: 'x' }, reason: 'writing a file' })]);
    expect(r.error?.code).toBe('APPROVAL_DENIED');
    expect(write.ran).toEqual([]);

    const yes = setup([{ tool: 'w*', decision: 'ask' }], 'allowed-once');
    expect((await call(yes.rt, 'write', { path: 'b.txt' })).isError).toBe(false);
    expect(yes.asked[0]!.reason).toBe('permission rule 0 (tool "w*") asks before write on "b.txt"');
    expect(yes.write.ran).toEqual(['b.txt']);
  });

  it('a rule with a path does not match a call without one; no match hands over', async () => {
    const { rt, read } = setup([{ tool: 'read', path: 'secrets/**', decision: 'deny' }]);
    expect((await call(rt, 'read', {})).isError).toBe(false);
    expect(read.ran).toEqual(['']);
  });
});
