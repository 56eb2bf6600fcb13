/**
 * Stage 2, the monotonic guard (SPEC §2.2): a string denies, undefined changes nothing, and nothing
 * registered later can turn a denial back into an allow.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/protocol/index.js';
import type { Guard } from '../../../src/runtime/hooks.js';
import { echoTool, expectError, expectOk, only, setup, typesOf } from './harness.js';

describe('the monotonic guard', () => {
  it('a string denies with GUARD_DENIED, the reason in the content; the body is skipped', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.tools.guard((c) => ((c.args as { text: string }).text.includes('rm') ? 'rm is never allowed' : undefined), 'no-rm');
    expectOk(rt, await call('echo', { text: 'ls' }).result, 'ls');
    const r = await call('echo', { text: 'rm -rf' }).result;
    expectError(rt, r, ErrorCode.GUARD_DENIED, 'rm is never allowed');
    expect(r.error?.name).toBe('GuardDeniedError');
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result']);
    expect(calls.map((c) => c.args)).toEqual([{ text: 'ls' }]);
  });

  it('runs after pre-execute allowed: an allow listener registered later cannot undo a guard denial', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const order: string[] = [];
    rt.tools.guard(() => (order.push('guard'), 'never'), 'kill-switch');
    rt.hooks.on('tools/pre-execute', 'allow-everything', () => (order.push('pre'), { kind: 'allow' }));
    rt.hooks.order('tools/pre-execute', ['allow-everything']);
    expectError(rt, await call('echo', { text: 'hi' }).result, ErrorCode.GUARD_DENIED, 'never');
    expect(order).toEqual(['pre', 'guard']);
    expect(calls).toHaveLength(0);
  });

  it('a later guard returning undefined cannot undo an earlier denial (and is not needed to decide)', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.tools.guard(() => 'first says no', 'first');
    rt.tools.guard(() => undefined, 'second');
    // Even a guard that "tries" to allow only has undefined to give.
    rt.tools.guard((() => ({ kind: 'allow' })) as unknown as Guard, 'sneaky');
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.GUARD_DENIED, 'first says no');
    expect(calls).toHaveLength(0);
  });

  it('a denial from a later guard holds although earlier ones returned undefined', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.tools.guard(() => undefined, 'first');
    rt.tools.guard(() => 'second says no', 'second');
    expectError(rt, await call('echo', { text: 'hi' }).result, ErrorCode.GUARD_DENIED, 'second says no');
    expect(calls).toHaveLength(0);
  });

  it('is not consulted when pre-execute already denied', async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    let consulted = 0;
    rt.tools.guard(() => void consulted++, 'counting');
    rt.hooks.on('tools/pre-execute', 'deny', () => ({ kind: 'deny', reason: 'policy' }));
    expectError(rt, await call('echo', { text: 'hi' }).result, ErrorCode.POLICY_DENIED, 'policy');
    expect(consulted).toBe(0);
  });

  it('a throwing guard fails closed with HOOK_FAILED naming it, logged as hook/failed', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.tools.guard(() => {
      throw new Error('rules file unreadable');
    }, 'workspace-guard');
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'workspace-guard');
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'tools/guard', listener: 'workspace-guard', failed: 'closed' });
    expect(only(rt, r.callId, 'hook/failed').message).toContain('rules file unreadable');
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'hook/failed', 'tool/result']);
    expect(calls).toHaveLength(0);
  });

  it('a guard returning anything but a string or undefined (an allow object, a promise) fails closed', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.tools.guard((async () => 'too late to deny') as unknown as Guard, 'async-guard');
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'async-guard');
    expect(calls).toHaveLength(0);
  });

  it('a guard assigning to the frozen args fails closed', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.tools.guard((c) => {
      (c.args as { text: string }).text = 'sanitised';
      return undefined;
    }, 'sanitiser');
    expectError(rt, await call('echo', { text: 'hi' }).result, ErrorCode.HOOK_FAILED, 'sanitiser');
    expect(calls).toHaveLength(0);
  });
});

/** What a caller would hold if `guard()` handed back a remover (it does not: append-only, SPEC §2.2). */
type MaybeRemover = (() => void) | undefined;

describe('guards are append-only', () => {
  it('rt.tools.guard() hands back no remover', () => {
    const { rt } = setup({ tools: [echoTool().tool] });
    expect(rt.tools.guard(() => undefined, 'g')).toBeUndefined();
  });

  it('a guard that removes itself while running cannot make the next guard (a kill-switch) be skipped', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    let removeSelf: MaybeRemover;
    removeSelf = rt.tools.guard(() => {
      removeSelf?.();
      return undefined;
    }, 'self-removing') as unknown as MaybeRemover;
    rt.tools.guard(() => 'the kill-switch is on', 'kill-switch');
    expectError(rt, await call('echo', { text: 'hi' }).result, ErrorCode.GUARD_DENIED, 'the kill-switch is on');
    expectError(rt, await call('echo', { text: 'again' }).result, ErrorCode.GUARD_DENIED, 'the kill-switch is on');
    expect(calls).toHaveLength(0);
  });

  it("a pre-execute listener holding the kill-switch's remover cannot delete it", async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const removeKill = rt.tools.guard(() => 'the kill-switch is on', 'kill-switch') as unknown as MaybeRemover;
    rt.hooks.on('tools/pre-execute', 'sneaky', (_c, next) => {
      removeKill?.();
      return next();
    });
    expectError(rt, await call('echo', { text: 'hi' }).result, ErrorCode.GUARD_DENIED, 'the kill-switch is on');
    expect(calls).toHaveLength(0);
  });

  it('each call consults the guards registered when it started; a guard added meanwhile reaches later calls', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    let added = false;
    rt.tools.guard(() => {
      if (!added) {
        added = true;
        rt.tools.guard(() => 'added while a call ran', 'late');
      }
      return undefined;
    }, 'adder');
    expectOk(rt, await call('echo', { text: 'first' }).result, 'first');
    expectError(rt, await call('echo', { text: 'second' }).result, ErrorCode.GUARD_DENIED, 'added while a call ran');
    expect(calls.map((c) => c.args)).toEqual([{ text: 'first' }]);
  });
});
