/**
 * Stage 1, `tools/pre-execute`: the reorderable waterfall (SPEC §2.1, §8.1) and failing closed
 * (SPEC §5, §8.2).
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode, type PreExecuteDecision } from '../../../src/protocol/index.js';
import { sleep } from '../../../src/runtime/clock.js';
import { echoTool, expectError, expectOk, flushMicrotasks, isSettled, only, setup, typesOf } from './harness.js';

describe('the pre-execute waterfall', () => {
  it('with every listener passing (next() or nothing) the call is allowed', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const order: string[] = [];
    rt.hooks.on('tools/pre-execute', 'a', (_c, next) => (order.push('a'), next()));
    rt.hooks.on('tools/pre-execute', 'b', () => void order.push('b'));
    rt.hooks.on('tools/pre-execute', 'c', async (_c, next) => (order.push('c'), next()));
    const r = await call('echo', { text: 'hi' }).result;
    expectOk(rt, r, 'hi');
    expect(order).toEqual(['a', 'b', 'c']);
    expect(calls).toHaveLength(1);
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result']);
  });

  it('deny gives POLICY_DENIED with the reason in the content; the body is skipped', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'plan-mode', () => ({ kind: 'deny', reason: 'plan mode: no side effects' }));
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.POLICY_DENIED, 'plan mode: no side effects');
    expect(r.error?.name).toBe('PolicyDeniedError');
    expect(calls).toHaveLength(0);
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result']);
  });

  it('an early allow wins over a later deny: later listeners are not consulted', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    let consulted = false;
    rt.hooks.on('tools/pre-execute', 'allow-reads', () => ({ kind: 'allow' }));
    rt.hooks.on('tools/pre-execute', 'deny-all', () => ((consulted = true), { kind: 'deny', reason: 'no' }));
    expectOk(rt, await call('echo', { text: 'hi' }).result, 'hi');
    expect(consulted).toBe(false);
    expect(calls).toHaveLength(1);
  });

  it('an early deny wins over a later allow', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'deny-all', () => ({ kind: 'deny', reason: 'sandbox' }));
    rt.hooks.on('tools/pre-execute', 'allow', () => ({ kind: 'allow' }));
    expectError(rt, await call('echo', { text: 'hi' }).result, ErrorCode.POLICY_DENIED, 'sandbox');
    expect(calls).toHaveLength(0);
  });

  it('next() hands the decision down the chain and returns it to the listener that asked', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const seenByA: PreExecuteDecision[] = [];
    rt.hooks.on('tools/pre-execute', 'a', async (_c, next) => {
      const d = await next();
      seenByA.push(d);
      return d;
    });
    rt.hooks.on('tools/pre-execute', 'b', (_c, next) => next());
    rt.hooks.on('tools/pre-execute', 'c', (c) =>
      (c.args as { text: string }).text === 'rm' ? { kind: 'deny', reason: 'c says no' } : undefined,
    );
    expectOk(rt, await call('echo', { text: 'hi' }).result, 'hi');
    expectError(rt, await call('echo', { text: 'rm' }).result, ErrorCode.POLICY_DENIED, 'c says no');
    expect(seenByA).toEqual([{ kind: 'allow' }, { kind: 'deny', reason: 'c says no' }]);
    expect(calls.map((c) => c.args)).toEqual([{ text: 'hi' }]);
  });

  it('rt.hooks.order fixes the order explicitly, whatever the registration order', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'deny-all', () => ({ kind: 'deny', reason: 'locked' }));
    rt.hooks.on('tools/pre-execute', 'trusted', () => ({ kind: 'allow' }));
    expectError(rt, await call('echo', { text: 'one' }).result, ErrorCode.POLICY_DENIED, 'locked');
    rt.hooks.order('tools/pre-execute', ['trusted', 'deny-all']);
    expectOk(rt, await call('echo', { text: 'two' }).result, 'two');
    rt.hooks.order('tools/pre-execute', ['deny-all']);
    expectError(rt, await call('echo', { text: 'three' }).result, ErrorCode.POLICY_DENIED, 'locked');
    expect(calls.map((c) => c.args)).toEqual([{ text: 'two' }]);
  });
});

describe('a failing pre-execute listener fails the call closed', () => {
  it('a throwing listener gives HOOK_FAILED naming it, logged as hook/failed (closed)', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'sandbox', () => {
      throw new Error('policy file missing');
    });
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'sandbox');
    expect(calls).toHaveLength(0);
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'hook/failed', 'tool/result']);
    const failed = only(rt, r.callId, 'hook/failed');
    expect(failed).toMatchObject({ hook: 'tools/pre-execute', listener: 'sandbox', failed: 'closed' });
    expect(failed.message).toContain('policy file missing');
  });

  it('a rejecting async listener fails closed the same way', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'remote-policy', async () => {
      throw new Error('policy server down');
    });
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'remote-policy');
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ listener: 'remote-policy', failed: 'closed' });
    expect(calls).toHaveLength(0);
  });

  for (const style of ['sync', 'async'] as const) {
    it(`an earlier listener that catches the ${style} failure of next() and answers allow cannot swallow it`, async () => {
      const { tool, calls } = echoTool();
      const { rt, call } = setup({ tools: [tool] });
      rt.hooks.on('tools/pre-execute', 'lenient', async (_c, next) => {
        try {
          await next();
        } catch {
          /* swallowed */
        }
        return { kind: 'allow' };
      });
      rt.hooks.on('tools/pre-execute', 'strict', style === 'sync'
        ? () => {
            throw new Error('strict broke');
          }
        : async () => {
            throw new Error('strict broke');
          });
      const r = await call('echo', { text: 'hi' }).result;
      expectError(rt, r, ErrorCode.HOOK_FAILED, 'strict');
      expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ listener: 'strict', failed: 'closed' });
      expect(calls).toHaveLength(0);
    });
  }

  it('a listener that fires next() without waiting and answers allow cannot outrun a later failure', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'impatient', (_c, next) => {
      void next();
      return { kind: 'allow' };
    });
    rt.hooks.on('tools/pre-execute', 'slow-strict', async () => {
      await Promise.resolve();
      throw new Error('strict broke later');
    });
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'slow-strict');
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ listener: 'slow-strict', failed: 'closed' });
    expect(calls).toHaveLength(0);
  });

  it('a listener returning something that is not a decision fails closed', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'sloppy', () => ({ kind: 'deny' }) as unknown as PreExecuteDecision);
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'sloppy');
    expect(calls).toHaveLength(0);
  });

  it('a listener assigning to the frozen args fails closed; the args stay as the model sent them', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'rewriter', (c) => {
      (c.args as { text: string }).text = 'rm -rf /';
      return { kind: 'allow' };
    });
    const input = { text: 'hi', nested: { n: 1 } };
    const r = await call('echo', input).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'rewriter');
    expect(only(rt, r.callId, 'hook/failed').message).toMatch(/read.only|frozen|Cannot assign/i);
    expect(JSON.parse(only(rt, r.callId, 'tool/call').input as string)).toEqual(input);
    expect(calls).toHaveLength(0);
  });

  it('assigning deep inside the args fails closed too', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'deep-rewriter', (c) => {
      (c.args as { nested: { n: number } }).nested.n = 2;
    });
    const r = await call('echo', { text: 'hi', nested: { n: 1 } }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'deep-rewriter');
    expect(calls).toHaveLength(0);
  });

  it('a write attempt that does not throw (Reflect.set) changes nothing the body or the log sees', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const writes: boolean[] = [];
    rt.hooks.on('tools/pre-execute', 'quiet-rewriter', (c) => {
      writes.push(Reflect.set(c.args as object, 'text', 'evil'));
      writes.push(Reflect.set((c.args as { nested: object }).nested, 'n', 666));
      writes.push(Reflect.set(c as object, 'args', { text: 'evil' }));
    });
    rt.tools.guard((c) => ((c.args as { text: string }).text === 'evil' ? 'evil args reached the guard' : undefined), 'check');
    const input = { text: 'hi', nested: { n: 1 } };
    const r = await call('echo', input).result;
    expectOk(rt, r, 'hi');
    expect(writes).toEqual([false, false, false]);
    expect(calls[0]!.args).toEqual(input);
    expect(JSON.parse(only(rt, r.callId, 'tool/call').input as string)).toEqual(input);
  });

  it('a listener that never settles is bounded by limits.hookTimeoutMs and fails closed naming it', async () => {
    const { tool, calls } = echoTool();
    const { rt, clock, call } = setup({ tools: [tool], limits: { hookTimeoutMs: 1_000 } });
    rt.hooks.on('tools/pre-execute', 'fast', (_c, next) => next());
    rt.hooks.on('tools/pre-execute', 'stuck', () => new Promise<never>(() => {}));
    const h = call('echo', { text: 'hi' });
    await clock.advance(999);
    expect(await isSettled(h.result)).toBe(false);
    expect(h.actor.getSnapshot().value).toEqual('preExecuteWaiting');
    await clock.advance(1);
    const r = await h.result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'stuck');
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'tools/pre-execute', listener: 'stuck', failed: 'closed' });
    expect(calls).toHaveLength(0);
  });

  it('the hook timeout names the listener that is still pending, not the last one consulted', async () => {
    const { tool, calls } = echoTool();
    const { rt, clock, call } = setup({ tools: [tool], limits: { hookTimeoutMs: 1_000 } });
    rt.hooks.on('tools/pre-execute', 'hangs-after-next', async (_c, next) => {
      await next();
      return new Promise<never>(() => {});
    });
    rt.hooks.on('tools/pre-execute', 'answers', () => ({ kind: 'allow' }));
    const h = call('echo', { text: 'hi' });
    await clock.advance(1_000);
    const r = await h.result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'hangs-after-next');
    expect(only(rt, r.callId, 'hook/failed').listener).toBe('hangs-after-next');
    expect(calls).toHaveLength(0);
  });

  it('a cancel while a listener is pending gives ABORTED_BEFORE_DISPATCH', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    let release!: (d: PreExecuteDecision) => void;
    rt.hooks.on('tools/pre-execute', 'slow', () => new Promise<PreExecuteDecision>((res) => (release = res)));
    const h = call('echo', { text: 'hi' });
    h.cancel('user pressed stop');
    const r = await h.result;
    expectError(rt, r, ErrorCode.ABORTED_BEFORE_DISPATCH);
    release({ kind: 'allow' }); // a late answer changes nothing
    await flushMicrotasks();
    expect(calls).toHaveLength(0);
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result']);
  });
});

describe('each listener gets its own hookTimeoutMs (SPEC §8.15)', () => {
  it('two slow listeners, each within its own budget, pass although together they take longer', async () => {
    const { tool, calls } = echoTool();
    const { rt, clock, call } = setup({ tools: [tool], limits: { hookTimeoutMs: 1_000 } });
    rt.hooks.on('tools/pre-execute', 'first', async (_c, next) => {
      await sleep(clock, 700);
      return next();
    });
    rt.hooks.on('tools/pre-execute', 'second', async () => {
      await sleep(clock, 700);
      return { kind: 'allow' };
    });
    const h = call('echo', { text: 'hi' });
    await clock.advance(1_400);
    expectOk(rt, await h.result, 'hi');
    expect(calls).toHaveLength(1);
  });

  it('a listener that hangs after a slow one is timed from its own start, and named', async () => {
    const { tool, calls } = echoTool();
    const { rt, clock, call } = setup({ tools: [tool], limits: { hookTimeoutMs: 1_000 } });
    rt.hooks.on('tools/pre-execute', 'slow', async (_c, next) => {
      await sleep(clock, 700);
      return next();
    });
    rt.hooks.on('tools/pre-execute', 'stuck', () => new Promise<never>(() => {}));
    const h = call('echo', { text: 'hi' });
    await clock.advance(1_699);
    expect(await isSettled(h.result)).toBe(false);
    await clock.advance(1);
    const r = await h.result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'stuck');
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ listener: 'stuck', message: 'no answer within 1000 ms' });
    expect(calls).toHaveLength(0);
  });
});
