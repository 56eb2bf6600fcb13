/**
 * Issue 32 item 2: every configured deny is decided before anyone is asked. A permission rule that
 * asks, followed by a listener (a preExecute hook, a rule of the caller's) that denies: the call is
 * denied and nobody is asked. When nothing later denies, the ask stands and is asked.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { applyConfig } from '../../../src/runtime/policies/applyConfig.js';
import { call, pathTool, recordingApproval } from './fixtures.js';

function setup() {
  const write = pathTool('write');
  const approval = recordingApproval('allowed-once');
  const rt = createRuntime({ tools: [write.tool], approval: approval.service });
  applyConfig(rt, { permissions: [{ tool: 'write', decision: 'ask' }] });
  // Registered after the config's rules: a deny-capable policy later in the chain.
  rt.hooks.on('tools/pre-execute', 'no-secrets', (c, next) => (String((c.args as { path?: unknown }).path).startsWith('.env') ? { kind: 'deny', reason: 'not the secrets' } : next()));
  return { rt, write, approval };
}

describe('deny before ask', () => {
  it('a denial names the file its rule came from', async () => {
    const write = pathTool('write');
    const rt = createRuntime({ tools: [write.tool] });
    applyConfig(rt, { permissions: [{ tool: 'write', path: '.env*', decision: 'deny', from: 'packages/app/dsh.config.json' }] });
    const r = await call(rt, 'write', { path: '.env.local' });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain('permission rule 0 (tool "write", path ".env*") of packages/app/dsh.config.json denies write');
  });

  it('an ask rule followed by a listener that denies: denied, nobody asked, the denier named', async () => {
    const { rt, write, approval } = setup();
    const r = await call(rt, 'write', { path: '.env' });
    expect(r.error?.code).toBe('POLICY_DENIED');
    expect(r.content).toContain('not the secrets');
    expect(r.decision).toMatchObject({ stage: 'pre-execute', outcome: 'deny', by: 'no-secrets' });
    expect(approval.asked).toEqual([]);
    expect(write.ran).toEqual([]);
  });

  it('when nothing later denies, the ask stands: asked once, then run', async () => {
    const { rt, write, approval } = setup();
    const r = await call(rt, 'write', { path: 'notes.md' });
    expect(r.isError).toBe(false);
    expect(approval.asked).toHaveLength(1);
    expect(write.ran).toEqual(['notes.md']);
  });
});
