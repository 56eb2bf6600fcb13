/**
 * Every user-supplied function may throw (or reject with, or abort with) a value that cannot be
 * described the easy way: no prototype, a throwing `toString`, throwing `message`/`name` getters,
 * a Proxy that throws on every trap, a revoked Proxy. Describing it must never throw: each failure
 * still lands where SPEC §5 puts it (closed with HOOK_FAILED naming the listener, TOOL_FAILED for
 * a body, open for an observer), and the turn it runs in completes.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { describeThrown, ErrorCode, thrownMessage, type LogEventOf } from '../../src/protocol/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { classifyRequestError } from '../../src/runtime/requestErrors.js';
import { toErrorInfo } from '../../src/runtime/toolError.js';
import { echoTool, expectError, expectOk, only, setup, typesOf } from '../runtime/pipeline/harness.js';

/** Fresh hostile values (a revoked Proxy cannot be reused). */
function hostiles(): Array<[string, () => unknown]> {
  const trapAll = new Proxy(
    {},
    new Proxy({}, { get: () => () => { throw new Error('trap'); } }),
  );
  return [
    ['Object.create(null)', () => Object.create(null)],
    ['a throwing toString', () => ({ toString: () => { throw new Error('no'); } })],
    ['throwing toString and valueOf getters', () => ({ get toString() { throw new Error('no'); }, get valueOf() { throw new Error('no'); } })],
    [
      'an Error with throwing message and name getters',
      () => {
        const e = new Error('x');
        Object.defineProperty(e, 'message', { get: () => { throw new Error('no message'); } });
        Object.defineProperty(e, 'name', { get: () => { throw new Error('no name'); } });
        return e;
      },
    ],
    ['a Proxy throwing on every trap', () => trapAll],
    [
      'a revoked Proxy',
      () => {
        const { proxy, revoke } = Proxy.revocable({}, {});
        revoke();
        return proxy;
      },
    ],
    ['a symbol', () => Symbol('boom')],
  ];
}

describe('describing a thrown value never throws', () => {
  for (const [label, make] of hostiles()) {
    it(`describeThrown / thrownMessage / toErrorInfo of ${label}`, () => {
      const v = make();
      expect(typeof describeThrown(v)).toBe('string');
      expect(typeof thrownMessage(v)).toBe('string');
      expect(toErrorInfo(v)).toMatchObject({ code: ErrorCode.TOOL_FAILED });
      expect(typeof toErrorInfo(v).message).toBe('string');
    });
  }
  for (const [label, make] of hostiles()) {
    it(`a model-request error that is ${label} is classified, not thrown`, () => {
      const info = classifyRequestError(make());
      expect(info.kind).toBe('fatal');
      expect(typeof info.message).toBe('string');
      expect(classifyRequestError(new Error('outer', { cause: make() })).message).toBe('outer');
    });
  }
  it('keeps the usual text of ordinary values', () => {
    expect(describeThrown(new TypeError('bad'))).toBe('TypeError: bad');
    expect(thrownMessage(new TypeError('bad'))).toBe('bad');
    expect(describeThrown('plain')).toBe('plain');
    expect(describeThrown(42)).toBe('42');
    expect(describeThrown(Object.create(null))).toContain('unprintable');
  });
});

/** Runs one call with `install` wiring a hostile throw, for every hostile value. */
function eachHostile(title: string, body: (value: () => unknown) => Promise<void>) {
  for (const [label, make] of hostiles()) it(`${title} (${label})`, () => body(make));
}

const hookFailed = (rt: ReturnType<typeof setup>['rt'], callId: string) => only(rt, callId, 'hook/failed') as LogEventOf<'hook/failed'>;

describe('a hostile throw from each user-supplied function lands where SPEC §5 puts it', () => {
  eachHostile('a tools/result observer that throws fails open: the call succeeds', async (v) => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/result', 'audit', () => {
      throw v();
    });
    const r = await call('echo', { text: 'hi' }).result;
    expectOk(rt, r, 'hi');
    expect(hookFailed(rt, r.callId)).toMatchObject({ hook: 'tools/result', listener: 'audit', failed: 'open' });
  });

  eachHostile('an async tools/result observer that rejects fails open', async (v) => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/result', 'audit', (async () => {
      throw v();
    }) as never);
    const r = await call('echo', { text: 'hi' }).result;
    expectOk(rt, r, 'hi');
    await new Promise((res) => setImmediate(res));
    expect(hookFailed(rt, r.callId)).toMatchObject({ hook: 'tools/result', listener: 'audit', failed: 'open' });
  });

  eachHostile('an execute wrapper that throws gives HOOK_FAILED naming it', async (v) => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'flaky-wrapper', () => {
      throw v();
    });
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'flaky-wrapper');
    expect(calls).toHaveLength(0);
    expect(hookFailed(rt, r.callId)).toMatchObject({ hook: 'tools/execute', listener: 'flaky-wrapper', failed: 'closed' });
  });

  eachHostile('an execute wrapper that rejects gives HOOK_FAILED naming it', async (v) => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'flaky-wrapper', async (_c, _e, next) => {
      await next();
      throw v();
    });
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'flaky-wrapper');
    expect(hookFailed(rt, r.callId)).toMatchObject({ hook: 'tools/execute', listener: 'flaky-wrapper' });
  });

  eachHostile('an execute wrapper whose outcome is hostile gives HOOK_FAILED naming it', async (v) => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'odd-wrapper', async () => v() as never);
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'odd-wrapper');
  });

  eachHostile('an execute wrapper failing with a hostile error keeps a described TOOL_FAILED', async (v) => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'odd-error', async () => ({ ok: false, error: v() }) as never);
    const r = await call('echo', { text: 'hi' }).result;
    expect(r.isError).toBe(true);
    expect(typeof r.error?.message).toBe('string');
    expect(r.error?.code).toBe(ErrorCode.TOOL_FAILED);
  });

  eachHostile('a tool body that throws gives TOOL_FAILED', async (v) => {
    const broken = defineTool({ name: 'broken', input: z.object({}), execute: () => { throw v(); } });
    const { rt, call } = setup({ tools: [broken] });
    const r = await call('broken').result;
    expectError(rt, r, ErrorCode.TOOL_FAILED);
    expect(typeof r.error?.message).toBe('string');
  });

  eachHostile('a tool body that rejects gives TOOL_FAILED', async (v) => {
    const broken = defineTool({ name: 'broken', input: z.object({}), execute: async () => { throw v(); } });
    const { rt, call } = setup({ tools: [broken] });
    expectError(rt, await call('broken').result, ErrorCode.TOOL_FAILED);
  });

  eachHostile('a wrapper that aborts the body with a hostile reason still settles the call', async (v) => {
    const { rt, call } = setup({
      tools: [defineTool({ name: 'waits', input: z.object({}), execute: (_a, exec) => new Promise((_r, reject) => exec.signal.addEventListener('abort', () => reject(exec.signal.reason))) })],
    });
    rt.hooks.on('tools/execute', 'aborter', (_c, exec, next) => {
      const c = new AbortController();
      const out = next({ signal: c.signal });
      c.abort(v());
      return out;
    });
    const r = await call('waits').result;
    expect(r.isError).toBe(true);
    expect(typeof r.error?.message).toBe('string');
  });

  eachHostile('a toContent that throws gives TOOL_FAILED', async (v) => {
    const t = defineTool({ name: 't', input: z.object({}), execute: () => ({ a: 1 }), toContent: () => { throw v(); } });
    const { rt, call } = setup({ tools: [t] });
    expectError(rt, await call('t').result, ErrorCode.TOOL_FAILED, 'toContent');
  });

  eachHostile('a finalizeContent that throws gives HOOK_FAILED naming it', async (v) => {
    const t = defineTool({ name: 't', input: z.object({}), execute: () => 'x', finalizeContent: () => { throw v(); } });
    const { rt, call } = setup({ tools: [t] });
    const r = await call('t').result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'finalizeContent');
    expect(hookFailed(rt, r.callId)).toMatchObject({ hook: 'finalizeContent', listener: 't.finalizeContent' });
  });

  eachHostile('a pre-execute listener that throws gives HOOK_FAILED naming it', async (v) => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'policy', () => {
      throw v();
    });
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'policy');
    expect(hookFailed(rt, r.callId)).toMatchObject({ hook: 'tools/pre-execute', listener: 'policy' });
  });

  eachHostile('a pre-execute listener that rejects, or answers a hostile decision, gives HOOK_FAILED naming it', async (v) => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'outer', (_c, next) => next());
    rt.hooks.on('tools/pre-execute', 'policy', async () => {
      throw v();
    });
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'policy');
    const { rt: rt2, call: call2 } = setup({ tools: [echoTool().tool] });
    rt2.hooks.on('tools/pre-execute', 'weird', () => v() as never);
    expectError(rt2, await call2('echo', { text: 'hi' }).result, ErrorCode.HOOK_FAILED, 'weird');
  });

  eachHostile('a guard that throws gives HOOK_FAILED naming it', async (v) => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.tools.guard(() => {
      throw v();
    }, 'kill-switch');
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'kill-switch');
    expect(hookFailed(rt, r.callId)).toMatchObject({ hook: 'tools/guard', listener: 'kill-switch' });
  });

  eachHostile('a post-execute listener that throws, rejects or answers a hostile decision gives HOOK_FAILED', async (v) => {
    for (const fn of [() => { throw v(); }, async () => { throw v(); }, () => v()]) {
      const { tool } = echoTool();
      const { rt, call } = setup({ tools: [tool], spillStore: false });
      rt.hooks.on('tools/post-execute', 'redact', fn as never);
      const r = await call('echo', { text: 'secret' }).result;
      expectError(rt, r, ErrorCode.HOOK_FAILED, 'redact');
      expect(r.content).not.toContain('secret');
      expect(hookFailed(rt, r.callId)).toMatchObject({ hook: 'tools/post-execute', listener: 'redact' });
    }
  });

  eachHostile('an appliesTo that throws gives HOOK_FAILED naming its listener', async (v) => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool], spillStore: false });
    rt.hooks.on('tools/post-execute', 'redact', () => undefined, {
      appliesTo: () => {
        throw v();
      },
    });
    const r = await call('echo', { text: 'secret' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'redact');
    expect(r.content).not.toContain('secret');
    expect(hookFailed(rt, r.callId)).toMatchObject({ hook: 'tools/post-execute', listener: 'redact' });
  });

  eachHostile('an isConcurrencySafe that throws gives HOOK_FAILED naming the tool', async (v) => {
    const t = defineTool({ name: 't', input: z.object({}), isConcurrencySafe: () => { throw v(); }, execute: () => 'ran' });
    const { rt, call } = setup({ tools: [t] });
    const r = await call('t').result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 't.isConcurrencySafe');
    expect(hookFailed(rt, r.callId)).toMatchObject({ hook: 'isConcurrencySafe', listener: 't.isConcurrencySafe' });
  });

  eachHostile('an approval service that throws denies, with an APPROVAL_FAILED warning', async (v) => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool], approval: { request: () => { throw v(); } } });
    rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask' }));
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.APPROVAL_DENIED);
    expect(calls).toHaveLength(0);
    expect(only(rt, r.callId, 'warning')).toMatchObject({ code: 'APPROVAL_FAILED' });
  });
});

describe('in a turn', () => {
  for (const [label, make] of hostiles()) {
    it(`a throwing tools/result observer (${label}) leaves the turn completed and the call's result intact`, async () => {
      const clock = new ManualClock();
      const { tool } = echoTool();
      const rt = createRuntime({ tools: [tool], clock });
      rt.hooks.on('tools/result', 'audit', () => {
        throw make();
      });
      const model = scriptedModel([{ toolCalls: [{ toolName: 'echo', input: { text: 'hi' } }] }, { text: 'done' }], { clock });
      const turn = rt.startTurn({ model, input: 'go' });
      let out: Awaited<typeof turn.done> | undefined;
      void turn.done.then((o) => (out = o));
      for (let i = 0; !out && i < 1_000; i++) {
        await new Promise((r) => setImmediate(r));
        if (!out && !(await clock.runNext())) await clock.advance(1);
      }
      expect(out?.outcome).toBe('completed');
      const result = rt.log.events().find((e): e is LogEventOf<'tool/result'> => e.type === 'tool/result')!;
      expect(result.result.isError).toBe(false);
      expect(result.result.content).toBe('hi');
      expect(typesOf(rt as never, result.callId)).toContain('hook/failed');
    });
  }
});
