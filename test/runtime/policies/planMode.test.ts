/** Plan mode: only read-only tools run; the rest are denied with a reason the model can act on (docs/configuration.md `plan`). */
import { describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { applyConfig } from '../../../src/runtime/policies/applyConfig.js';
import { createBuiltinTools } from '../../../src/adapters/tools/builtinTools.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { call, tempDir } from '../../adapters/workspaceFixture.js';
import { pathTool } from './fixtures.js';
import { planMode, planModeReason } from '../../../src/runtime/policies/planMode.js';
import { z } from 'zod';

describe('plan mode', () => {
  it('the built-in read, grep and glob are read-only; write, edit and bash are not', () => {
    const b = createBuiltinTools({ root: '/nonexistent' });
    expect(Object.fromEntries(b.all.map((t) => [t.name, t.readOnly]))).toEqual({
      read: true, grep: true, glob: true, write: false, edit: false, bash: false,
    });
    expect(defineTool({ name: 't', input: z.object({}), execute: () => 1 }).readOnly).toBe(false);
  });

  it('denies write with an actionable reason (POLICY_DENIED, nothing written) and lets read run', async () => {
    const root = await tempDir();
    await writeFile(join(root, 'a.txt'), 'hello\n');
    const b = createBuiltinTools({ root });
    const rt = createRuntime({ tools: b.all });
    applyConfig(rt, {}, { plan: true, root });

    const w = await call(rt, 'write', { path: 'b.txt', content: 'x' });
    expect(w.error?.code).toBe('POLICY_DENIED');
    expect(w.content).toContain('plan mode: "write" is not run');
    expect(w.content).toContain('only read-only tools (read, grep, glob)');
    expect(w.content).toContain('answer with your plan');
    await expect(import('node:fs/promises').then((fs) => fs.stat(join(root, 'b.txt')))).rejects.toThrow();

    const bash = await call(rt, 'bash', { command: 'touch c.txt' });
    expect(bash.error?.code).toBe('POLICY_DENIED');

    const r = await call(rt, 'read', { path: 'a.txt' });
    expect(r.isError).toBe(false);
    expect(r.content).toContain('hello');
    expect((await call(rt, 'grep', { pattern: 'hel' })).isError).toBe(false);
  });

  it('the config switch turns it on too, and it runs before a permission allow', async () => {
    const w = pathTool('write');
    const rt = createRuntime({ tools: [w.tool] });
    rt.hooks.on('tools/pre-execute', 'mine', (_c, next) => next());
    applyConfig(rt, { plan: true, permissions: [{ tool: '*', decision: 'allow' }] });
    const r = await call(rt, 'write', { path: 'a' });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(w.ran).toEqual([]);
  });

  it('a tool registered after applyConfig is judged by its own readOnly flag; the remover turns plan mode off', async () => {
    const rt = createRuntime();
    const off = applyConfig(rt, { plan: true });
    const look = pathTool('look', { readOnly: true });
    const poke = pathTool('poke');
    rt.tools.register(look.tool);
    rt.tools.register(poke.tool);
    expect((await call(rt, 'look', {})).isError).toBe(false);
    expect((await call(rt, 'poke', {})).error?.code).toBe('POLICY_DENIED');
    off();
    expect((await call(rt, 'poke', {})).isError).toBe(false);
  });
});

describe('plan mode on its own (the listener and its reason)', () => {
  const asked = (toolName: string) => ({ toolName }) as Parameters<ReturnType<typeof planMode>>[0];
  const next = () => ({ kind: 'allow' }) as const;

  it('the reason names the tool, lists the read-only tools to investigate with, says to answer with the plan and that the user turns plan mode off', () => {
    const r = planModeReason('write', ['read', 'grep']);
    expect(r).toContain('plan mode: "write" is not run');
    expect(r).toContain('plan mode allows only read-only tools (read, grep). ');
    expect(r).toContain('Use them to investigate');
    expect(r).toContain('answer with your plan');
    expect(r).toContain('the user will turn plan mode off to carry it out.');
  });

  it('with no read-only tool to name, the reason lists none (no empty parentheses)', () => {
    for (const r of [planModeReason('bash'), planModeReason('bash', [])]) {
      expect(r).toContain('plan mode allows only read-only tools. Use them');
      expect(r).not.toContain('tools (');
      expect(r).not.toContain('()');
    }
  });

  it('a listener without readOnlyTools still denies with a reason; a read-only tool goes on to next()', () => {
    const listener = planMode({ isReadOnly: (n) => n === 'look' });
    const d = listener(asked('poke'), next) as { kind: string; reason: string };
    expect(d.kind).toBe('deny');
    expect(d.reason).toContain('plan mode allows only read-only tools. Use them');
    expect(listener(asked('look'), () => ({ kind: 'ask' }))).toEqual({ kind: 'ask' });
    const listing = planMode({ isReadOnly: () => false, readOnlyTools: () => ['look'] });
    expect((listing(asked('poke'), next) as { reason: string }).reason).toContain('only read-only tools (look)');
  });
});
