/** Plan mode: only read-only tools run; the rest are denied with a reason the model can act on. */
import { describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { applyConfig } from '../../../src/runtime/policies/applyConfig.js';
import { createBuiltinTools } from '../../../src/adapters/tools/builtinTools.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { call, tempDir } from '../../adapters/workspaceFixture.js';
import { pathTool } from './fixtures.js';
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
