/** Permission rules as a pre-execute listener: first match decides; hostile paths are normalised first. */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { applyConfig } from '../../../src/runtime/policies/applyConfig.js';
import { normaliseToolPath } from '../../../src/runtime/policies/toolPath.js';
import type { PermissionRule } from '../../../src/runtime/policies/permissionRules.js';
import { z } from 'zod';
import { defineTool } from '../../../src/runtime/defineTool.js';
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
  it.each(['../x', 'a/../../x', '/etc/passwd', '/home/u/projector/x', 'a\0b', `${ROOT}/../other/x`, '/home/u', '/', `${ROOT}/../..`])('%s is outside', (raw) => {
    expect(normaliseToolPath(raw, ROOT)).toEqual({ inside: false });
  });
  it('a root written with a trailing slash or dots is the same root; no root: every absolute path is outside', () => {
    expect(normaliseToolPath(`${ROOT}/src/a`, `${ROOT}/`)).toEqual({ inside: true, rel: 'src/a' });
    expect(normaliseToolPath(`${ROOT}/src/a`, '/home/./u//proj')).toEqual({ inside: true, rel: 'src/a' });
    expect(normaliseToolPath('/src/a', '/')).toEqual({ inside: true, rel: 'src/a' });
    expect(normaliseToolPath(`${ROOT}/src/a`)).toEqual({ inside: false });
    expect(normaliseToolPath('src/a')).toEqual({ inside: true, rel: 'src/a' });
    expect(normaliseToolPath(`${ROOT}/x`, '/../x')).toEqual({ inside: false });
  });
  it('a path with a NUL byte is outside, wherever it points', () => {
    for (const raw of ['a\u0000b', `${ROOT}/a\u0000`, '\u0000']) expect(normaliseToolPath(raw, ROOT), JSON.stringify(raw)).toEqual({ inside: false });
  });
  it('an absolute path that climbs above / is outside', () => {
    for (const raw of ['/..', '/../x', '/a/../../x']) expect(normaliseToolPath(raw, ROOT), raw).toEqual({ inside: false });
    expect(normaliseToolPath('/../x', '/')).toEqual({ inside: false });
  });
  it.each([[''], ['./'], ['a/..']])('%j is the root itself', (raw) => {
    expect(normaliseToolPath(raw, ROOT)).toEqual({ inside: true, rel: '.' });
  });
  it.each([[42], [null], [['secrets/k']], [{ toString: () => 'secrets/k' }]])('a path that is no string (%j) is outside', (raw) => {
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

  it('the default deny reason names the rule, its file, the tool and the path, and tells the model not to work around it', async () => {
    const { rt } = setup([{ tool: 'write', path: '.env*', decision: 'deny', from: '.dsh/config.json' }]);
    const r = await call(rt, 'write', { path: './.env.local' });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain(
      'permission rule 0 (tool "write", path ".env*") of .dsh/config.json denies write on ".env.local"; this is the user\'s configuration, so do not retry it another way: use another path or tool, or ask the user',
    );
    const bare = setup([{ tool: 'read', decision: 'deny' }]);
    const b = await call(bare.rt, 'read', {});
    expect(b.content).toContain('permission rule 0 (tool "read") denies read; this is the user\'s configuration');
  });

  it('an ask rule names where the call points: a path outside the workspace, or nothing without a path', async () => {
    const out = setup([{ tool: 'write', path: 'docs/**', decision: 'ask' }]);
    await call(out.rt, 'write', { path: '/etc/passwd' });
    expect(out.asked.map((a) => a.reason)).toEqual(['permission rule 0 (tool "write", path "docs/**") asks before write on a path outside the workspace']);
    expect(out.write.ran).toEqual([]);
    const none = setup([{ tool: 'write', decision: 'ask' }]);
    await call(none.rt, 'write', {});
    expect(none.asked.map((a) => a.reason)).toEqual(['permission rule 0 (tool "write") asks before write']);
  });

  it('a later deny wins over an ask (deny before ask), whether it answers at once or later', async () => {
    for (const later of ['sync', 'async'] as const) {
      const { rt, write, asked } = setup([{ tool: 'write', decision: 'ask' }], 'allowed-once');
      rt.hooks.on('tools/pre-execute', 'later', (c, next) => {
        const d = (c.args as { path?: string }).path === 'no' ? ({ kind: 'deny', reason: 'later says no' } as const) : next();
        return later === 'sync' ? d : Promise.resolve(d);
      });
      const r = await call(rt, 'write', { path: 'no' });
      expect(r.error?.code, later).toBe('POLICY_DENIED');
      expect(r.content).toContain('later says no');
      expect(asked, later).toEqual([]);
      expect((await call(rt, 'write', { path: 'yes' })).isError).toBe(false);
      expect(asked.map((a) => a.reason), later).toEqual(['permission rule 0 (tool "write") asks before write on "yes"']);
      expect(write.ran).toEqual(['yes']);
    }
  });

  it('rules of other tools are passed over; a tool glob picks its tools', async () => {
    const { rt, read, write } = setup([
      { tool: 'wr*', path: 'a', decision: 'deny' },
      { tool: 're?d', decision: 'deny', reason: 'no reading' },
    ]);
    expect((await call(rt, 'write', { path: 'b' })).isError).toBe(false);
    expect((await call(rt, 'write', { path: 'a' })).error?.code).toBe('POLICY_DENIED');
    expect((await call(rt, 'read', { path: 'a' })).content).toContain('no reading');
    expect(write.ran).toEqual(['b']);
    expect(read.ran).toEqual([]);
  });

  it('an allow rule decides at once: a later listener is not consulted', async () => {
    const { rt, write } = setup([{ tool: 'write', decision: 'allow' }]);
    let consulted = 0;
    rt.hooks.on('tools/pre-execute', 'later', () => (consulted++, { kind: 'deny', reason: 'later says no' }));
    expect((await call(rt, 'write', { path: 'a' })).isError).toBe(false);
    expect(consulted).toBe(0);
    expect(write.ran).toEqual(['a']);
  });

  it('a call whose arguments are no object has no path: rules with a path pass it over, the others apply', async () => {
    const loose = defineTool({ name: 'loose', input: z.any(), execute: () => 'ran' });
    const rt = createRuntime({ tools: [loose] });
    applyConfig(rt, { permissions: [{ tool: 'loose', path: '**', decision: 'deny' }] });
    for (const input of [null, 7, [1]]) expect((await call(rt, 'loose', input)).isError, JSON.stringify(input)).toBe(false);
    const all = createRuntime({ tools: [loose] });
    applyConfig(all, { permissions: [{ tool: 'loose', decision: 'deny' }] });
    expect((await call(all, 'loose', null)).error?.code).toBe('POLICY_DENIED');
  });
});
