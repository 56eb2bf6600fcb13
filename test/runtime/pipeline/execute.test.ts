/**
 * Stages 3 and 4: `tools/execute` around-wrappers and the tool body (SPEC §2.3–2.4), failures of
 * the body, cancellation and timeouts (SPEC §5).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ErrorCode } from '../../../src/protocol/index.js';
import { scriptedModel } from '../../../src/adapters/model/index.js';
import { sleep } from '../../../src/runtime/clock.js';
import { defineTool, type ExecContext } from '../../../src/runtime/defineTool.js';
import { ToolError } from '../../../src/runtime/toolError.js';
import { retry } from '../../../src/runtime/wrappers/retry.js';
import { timeout } from '../../../src/runtime/wrappers/timeout.js';
import { echoTool, eventsOf, expectError, expectOk, flushMicrotasks, isSettled, manualTool, only, setup, typesOf } from './harness.js';

describe('the tool body', () => {
  it('a body that throws gives TOOL_FAILED with its message; the runtime keeps serving calls', async () => {
    const broken = defineTool({
      name: 'broken',
      input: z.object({}),
      execute: () => {
        throw new Error('disk on fire');
      },
    });
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [broken, tool] });
    const r = await call('broken').result;
    expectError(rt, r, ErrorCode.TOOL_FAILED, 'disk on fire');
    expect(r.error?.name).toBe('ToolFailedError');
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result']);
    expectOk(rt, await call('echo', { text: 'still here' }).result, 'still here');
  });

  it('a body that throws a ToolError fails with that stable code', async () => {
    const missing = defineTool({
      name: 'read',
      input: z.object({ path: z.string() }),
      execute: async ({ path }) => {
        throw new ToolError(ErrorCode.FS_NOT_FOUND, `${path} does not exist`);
      },
    });
    const { rt, call } = setup({ tools: [missing] });
    const r = await call('read', { path: 'a.txt' }).result;
    expectError(rt, r, ErrorCode.FS_NOT_FOUND, 'a.txt does not exist');
  });

  it('the tool/call event is in the log before the body runs', async () => {
    const seenBefore: string[] = [];
    let rtRef: ReturnType<typeof setup>['rt'] | undefined;
    const peek = defineTool({
      name: 'peek',
      input: z.object({}),
      execute: () => {
        seenBefore.push(...rtRef!.log.events().map((e) => e.type));
        return 'done';
      },
    });
    const { rt, call } = setup({ tools: [peek] });
    rtRef = rt;
    expectOk(rt, await call('peek').result, 'done');
    expect(seenBefore).toEqual(['tool/call']);
  });

  it('a string value is its own content; other values default to their JSON', async () => {
    const obj = defineTool({ name: 'obj', input: z.object({}), execute: () => ({ files: ['a', 'b'], count: 2 }) });
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [obj, tool] });
    const r = expectOk(rt, await call('obj').result, '{"files":["a","b"],"count":2}');
    expect(r.value).toEqual({ files: ['a', 'b'], count: 2 });
    expectOk(rt, await call('echo', { text: 'plain "text"' }).result, 'plain "text"');
  });

  it('a body value failing the output schema gives INVALID_OUTPUT', async () => {
    const liar = defineTool({ name: 'count', input: z.object({}), output: z.object({ n: z.number() }), execute: () => ({ n: 'three' }) as never });
    const { rt, call } = setup({ tools: [liar] });
    const r = await call('count').result;
    expectError(rt, r, ErrorCode.INVALID_OUTPUT, /output schema/);
    expect(r.content).not.toContain('three');
  });

  it('an output schema that throws while checking fails the call cleanly', async () => {
    const weird = defineTool({
      name: 'weird',
      input: z.object({}),
      output: z.custom<string>(() => {
        throw new Error('validator bug');
      }),
      execute: () => 'value',
    });
    const { rt, call } = setup({ tools: [weird] });
    const r = await call('weird').result;
    expect(r.isError).toBe(true);
    expectError(rt, r, ErrorCode.INVALID_OUTPUT, 'validator bug');
    expect(only(rt, r.callId, 'tool/result').result).toEqual(r);
  });
});

describe('results stay well-formed whatever a tool or wrapper hands back', () => {
  it('a toContent that returns no string fails the call instead of putting a non-string in the log', async () => {
    const tool = defineTool({ name: 'obj', input: z.object({}), execute: () => ({ a: 1 }), toContent: ((v: unknown) => v) as never });
    const { rt, call } = setup({ tools: [tool] });
    const r = await call('obj').result;
    expectError(rt, r, ErrorCode.TOOL_FAILED, 'toContent');
  });

  it('an error code outside SPEC §6 (from a wrapper or a ToolError built without types) becomes TOOL_FAILED', async () => {
    const thrower = defineTool({
      name: 'thrower',
      input: z.object({}),
      execute: () => {
        throw new ToolError('MY_OWN_CODE' as ErrorCode, 'custom failure');
      },
    });
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [thrower, tool] });
    const r = await call('thrower').result;
    expectError(rt, r, ErrorCode.TOOL_FAILED, 'custom failure');
    rt.hooks.on('tools/execute', 'odd', async () => ({ ok: false, error: { name: 'Odd', code: 'ODD' as ErrorCode, message: 'odd failure' } }));
    const w = await call('echo', { text: 'hi' }).result;
    expectError(rt, w, ErrorCode.TOOL_FAILED, 'odd failure');
  });

  it('a failure from a wrapper with a code alone (no name, no message) says "the tool failed"', async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'terse', async () => ({ ok: false, error: { code: ErrorCode.TOOL_FAILED } }) as never);
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.TOOL_FAILED, 'the tool failed');
    expect(r.error?.message).toBe('the tool failed');
  });

  it("a failure from a wrapper with a code and a message but no name keeps the message whole, as one with a name does", async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const long = `quota exceeded: ${'x'.repeat(5_000)}`;
    rt.hooks.on('tools/execute', 'quota', async () => ({ ok: false, error: { code: ErrorCode.TIMEOUT, message: long } }) as never);
    const r = await call('echo', { text: 'hi' }).result;
    expect(r.error?.code).toBe(ErrorCode.TIMEOUT);
    expect(r.error?.message).toBe(long);
  });
});

describe('cancel', () => {
  it('a cancel while executing aborts the body signal and gives ABORTED', async () => {
    const { tool, runs } = manualTool('slow', { honoursSignal: true });
    const { rt, call } = setup({ tools: [tool] });
    const h = call('slow');
    await flushMicrotasks();
    expect(h.actor.getSnapshot().value).toEqual('executing');
    h.cancel('user pressed stop');
    const r = await h.result;
    expectError(rt, r, ErrorCode.ABORTED);
    expect(r.error?.name).toBe('AbortedError');
    expect(runs[0]!.abortedWith()).toBe('user pressed stop');
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result']);
  });

  it('a body that ignores the signal is settled as ABORTED after limits.abortGraceMs; its late outcome is discarded and noted', async () => {
    const { tool, runs } = manualTool('stubborn');
    const { rt, clock, call } = setup({ tools: [tool], limits: { abortGraceMs: 500 } });
    const h = call('stubborn');
    await flushMicrotasks();
    h.cancel();
    await clock.advance(499);
    expect(await isSettled(h.result)).toBe(false);
    expect(h.actor.getSnapshot().value).toEqual('aborting');
    await clock.advance(1);
    const r = await h.result;
    expectError(rt, r, ErrorCode.ABORTED, /grace/);
    runs[0]!.resolve('finally done');
    await flushMicrotasks();
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result', 'warning']);
    expect(only(rt, r.callId, 'warning').code).toBe('LATE_OUTCOME_DISCARDED');
    expect(only(rt, r.callId, 'tool/result').result.content).not.toContain('finally done');
  });

  it('a body that settles while being aborted ends ABORTED, and no timer of the call is left behind', async () => {
    const { tool, runs } = manualTool('slowToStop');
    const { rt, clock, call } = setup({ tools: [tool], limits: { abortGraceMs: 500, callTimeoutMs: 60_000 } });
    const h = call('slowToStop');
    await flushMicrotasks();
    h.cancel();
    await clock.advance(100);
    expect(h.actor.getSnapshot().value).toEqual('aborting');
    runs[0]!.resolve('stopped');
    const r = await h.result;
    expectError(rt, r, ErrorCode.ABORTED);
    // Neither the grace timer nor the per-call deadline is still armed.
    expect(clock.pending).toBe(0);
  });

  it('the per-call deadline stays armed while the body is aborted: a grace longer than the deadline still ends there', async () => {
    const { tool } = manualTool('deaf');
    const { rt, clock, call } = setup({ tools: [tool], limits: { abortGraceMs: 10_000, callTimeoutMs: 1_000 } });
    const h = call('deaf');
    await flushMicrotasks();
    await clock.advance(100);
    h.cancel();
    await clock.advance(899);
    expect(await isSettled(h.result)).toBe(false);
    await clock.advance(1);
    const r = await h.result;
    expectError(rt, r, ErrorCode.ABORTED);
    expect(clock.pending).toBe(0);
  });

  it('a body that finished before the cancel keeps its result', async () => {
    const { tool, runs } = manualTool('quick');
    const { rt, call } = setup({ tools: [tool] });
    const h = call('quick');
    await flushMicrotasks();
    runs[0]!.resolve('done');
    const r = await h.result;
    h.cancel();
    expectOk(rt, r, 'done');
  });
});

describe('tools/execute wrappers and the signal', () => {
  it('a wrapper that replaces exec.signal: a caller cancel still reaches the body', async () => {
    const { tool, runs } = manualTool('slow', { honoursSignal: true });
    const { rt, call } = setup({ tools: [tool] });
    const own = new AbortController();
    rt.hooks.on('tools/execute', 'replacer', (_c, _exec, next) => next({ signal: own.signal }));
    const h = call('slow');
    await flushMicrotasks();
    h.cancel('stop');
    const r = await h.result;
    expectError(rt, r, ErrorCode.ABORTED);
    expect(runs[0]!.abortedWith()).toBe('stop');
    expect(own.signal.aborted).toBe(false);
  });

  it("the wrapper's own signal reaches the body too", async () => {
    const { tool, runs } = manualTool('slow', { honoursSignal: true });
    const { rt, call } = setup({ tools: [tool] });
    const own = new AbortController();
    rt.hooks.on('tools/execute', 'replacer', (_c, _exec, next) => next({ signal: own.signal }));
    const h = call('slow');
    await flushMicrotasks();
    own.abort(new ToolError(ErrorCode.TIMEOUT, 'budget spent'));
    const r = await h.result;
    expectError(rt, r, ErrorCode.TIMEOUT, 'budget spent');
    expect(runs[0]!.abortedWith()).toBeInstanceOf(ToolError);
  });

  it('a wrapper passing no signal keeps the one it got (it cannot remove it)', async () => {
    const { tool, runs } = manualTool('slow', { honoursSignal: true });
    const { rt, call } = setup({ tools: [tool] });
    const outer = new AbortController();
    rt.hooks.on('tools/execute', 'outer', (_c, _exec, next) => next({ signal: outer.signal }));
    rt.hooks.on('tools/execute', 'no-signal', (_c, _exec, next) => next());
    rt.hooks.on('tools/execute', 'undefined-signal', (_c, _exec, next) => next({ signal: undefined }));
    rt.hooks.on('tools/execute', 'null-signal', (_c, exec, next) => next({ ...exec, signal: null as unknown as AbortSignal }));
    const h = call('slow');
    await flushMicrotasks();
    expect(runs).toHaveLength(1);
    expect(runs[0]!.exec.signal).toBeInstanceOf(AbortSignal);
    outer.abort('outer gave up');
    const r = await h.result;
    expectError(rt, r, ErrorCode.ABORTED, 'outer gave up');
  });

  it('nested wrappers that each replace the signal: the outer one still reaches the body', async () => {
    const { tool, runs } = manualTool('slow', { honoursSignal: true });
    const { rt, clock, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'timeout', timeout({ ms: 1_000 }));
    rt.hooks.on('tools/execute', 'tracing', (_c, _exec, next) => next({ signal: new AbortController().signal }));
    const h = call('slow');
    await clock.advance(1_000);
    const r = await h.result;
    expectError(rt, r, ErrorCode.TIMEOUT);
    // The body was told: it stops instead of running on unobserved.
    expect(runs[0]!.abortedWith()).toBeInstanceOf(ToolError);
  });

  it('a throwing wrapper fails closed with HOOK_FAILED naming it; the body does not run', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'broken-wrapper', () => {
      throw new Error('wrapper bug');
    });
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'broken-wrapper');
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'tools/execute', listener: 'broken-wrapper', failed: 'closed' });
    expect(calls).toHaveLength(0);
  });
});

describe('the timeout wrapper', () => {
  it('settles TIMEOUT at the deadline even when the body ignores its signal; the late outcome is discarded and noted', async () => {
    const { tool, runs } = manualTool('stubborn');
    const { rt, clock, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'timeout', timeout({ ms: 2_000 }));
    const h = call('stubborn');
    await clock.advance(1_999);
    expect(await isSettled(h.result)).toBe(false);
    await clock.advance(1);
    const r = await h.result;
    expectError(rt, r, ErrorCode.TIMEOUT, /2000 ms/);
    expect(r.error?.name).toBe('TimeoutError');
    expect(runs[0]!.abortedWith()).toBeInstanceOf(ToolError);
    runs[0]!.resolve('too late');
    await flushMicrotasks();
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result', 'warning']);
    const warning = only(rt, r.callId, 'warning');
    expect(warning.code).toBe('LATE_OUTCOME_DISCARDED');
    expect(JSON.stringify(rt.log.events())).not.toContain('too late');
  });

  it('a body that honours its signal stops at the deadline: TIMEOUT, and nothing late to note', async () => {
    const { tool, runs } = manualTool('polite', { honoursSignal: true });
    const { rt, clock, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'timeout', timeout({ ms: 2_000 }));
    const h = call('polite');
    await clock.advance(2_000);
    const r = await h.result;
    expectError(rt, r, ErrorCode.TIMEOUT);
    expect(runs[0]!.abortedWith()).toBeInstanceOf(ToolError);
    await clock.advance(1_000);
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result']);
  });

  it('a body that finishes in time keeps its result, and no late warning follows', async () => {
    const { tool, runs } = manualTool('quick');
    const { rt, clock, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'timeout', timeout({ ms: 2_000 }));
    const h = call('quick');
    await clock.advance(1_000);
    runs[0]!.resolve('in time');
    expectOk(rt, await h.result, 'in time');
    await clock.advance(5_000);
    expect(typesOf(rt, 'call-1')).toEqual(['tool/call', 'tool/result']);
  });

  it('after a cancel the deadline is moot: no TIMEOUT, no late-outcome warning while the body has not settled', async () => {
    const { tool, runs } = manualTool('stubborn');
    const { rt, clock, call } = setup({ tools: [tool], limits: { abortGraceMs: 100 } });
    rt.hooks.on('tools/execute', 'timeout', timeout({ ms: 2_000 }));
    const h = call('stubborn');
    await clock.advance(500);
    h.cancel();
    await clock.advance(100);
    const r = await h.result;
    expectError(rt, r, ErrorCode.ABORTED);
    await clock.advance(10_000);
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result']);
    runs[0]!.resolve('finally');
    await flushMicrotasks();
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result', 'warning']);
    expect(only(rt, r.callId, 'warning').code).toBe('LATE_OUTCOME_DISCARDED');
  });

  it('a deadline chosen per call (undefined: none)', async () => {
    const { tool, runs } = manualTool('slow');
    const { rt, clock, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'timeout', timeout({ ms: (c) => ((c.rawInput as string).includes('quick') ? 100 : undefined) }));
    const limited = call('slow', { quick: true });
    const unlimited = call('slow', {});
    await clock.advance(10_000);
    expectError(rt, await limited.result, ErrorCode.TIMEOUT);
    expect(await isSettled(unlimited.result)).toBe(false);
    runs[1]!.resolve('eventually');
    expectOk(rt, await unlimited.result, 'eventually');
  });
});

describe('the retry wrapper', () => {
  /** A body that fails with `failures[i]` on attempt i+1, then returns 'ok'. */
  function flaky(failures: Array<ErrorCode | 'throw'>, idempotent: boolean) {
    const attempts: number[] = [];
    const tool = defineTool({
      name: 'flaky',
      input: z.object({}),
      idempotent,
      execute: (_a, exec: ExecContext) => {
        attempts.push(exec.attempt);
        const f = failures[attempts.length - 1];
        if (f === 'throw') throw new Error(`attempt ${exec.attempt} failed`);
        if (f) throw new ToolError(f, `attempt ${exec.attempt} failed`);
        return `ok on attempt ${exec.attempt}`;
      },
    });
    return { tool, attempts };
  }

  it('retries an idempotent tool on a retryable failure, with backoff on the injected clock', async () => {
    const { tool, attempts } = flaky(['throw', 'throw'], true);
    const { rt, clock, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'retry', retry({ maxAttempts: 3, backoffMs: (n) => 100 * 2 ** (n - 1) }));
    const h = call('flaky');
    await flushMicrotasks();
    expect(attempts).toEqual([1]);
    await clock.advance(99);
    expect(attempts).toEqual([1]);
    await clock.advance(1);
    expect(attempts).toEqual([1, 2]);
    await clock.advance(199);
    expect(attempts).toEqual([1, 2]);
    await clock.advance(1);
    expect(attempts).toEqual([1, 2, 3]);
    expectOk(rt, await h.result, 'ok on attempt 3');
  });

  it('is bounded: after maxAttempts the last failure is the result', async () => {
    const { tool, attempts } = flaky(['throw', 'throw', 'throw', 'throw', 'throw'], true);
    const { rt, clock, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'retry', retry({ maxAttempts: 3 }));
    const h = call('flaky');
    await clock.advance(60_000);
    expectError(rt, await h.result, ErrorCode.TOOL_FAILED, 'attempt 3 failed');
    expect(attempts).toEqual([1, 2, 3]);
  });

  it('does not retry a tool that is not idempotent', async () => {
    const { tool, attempts } = flaky(['throw'], false);
    const { rt, clock, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'retry', retry({ maxAttempts: 3 }));
    const h = call('flaky');
    await clock.advance(60_000);
    expectError(rt, await h.result, ErrorCode.TOOL_FAILED, 'attempt 1 failed');
    expect(attempts).toEqual([1]);
  });

  it('does not retry a code that is not declared retryable', async () => {
    const { tool, attempts } = flaky([ErrorCode.FS_NOT_FOUND], true);
    const { rt, clock, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'retry', retry({ maxAttempts: 3 }));
    const h = call('flaky');
    await clock.advance(60_000);
    expectError(rt, await h.result, ErrorCode.FS_NOT_FOUND);
    expect(attempts).toEqual([1]);
  });

  it('retries exactly the declared codes', async () => {
    const { tool, attempts } = flaky([ErrorCode.FS_STALE_VERSION, ErrorCode.TOOL_FAILED], true);
    const { rt, clock, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'retry', retry({ maxAttempts: 5, retryableCodes: [ErrorCode.FS_STALE_VERSION] }));
    const h = call('flaky');
    await clock.advance(60_000);
    expectError(rt, await h.result, ErrorCode.TOOL_FAILED, 'attempt 2 failed');
    expect(attempts).toEqual([1, 2]);
  });

  it('around a timeout: each attempt gets its own deadline; the call ends TIMEOUT when all time out', async () => {
    const { tool, runs } = manualTool('stuck', { idempotent: true });
    const { rt, clock, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'retry', retry({ maxAttempts: 2, backoffMs: () => 50 }));
    rt.hooks.on('tools/execute', 'timeout', timeout({ ms: 1_000 }));
    const h = call('stuck');
    await clock.advance(1_000);
    expect(runs).toHaveLength(1);
    await clock.advance(50);
    expect(runs).toHaveLength(2);
    expect(runs[1]!.exec.attempt).toBe(2);
    await clock.advance(1_000);
    expectError(rt, await h.result, ErrorCode.TIMEOUT);
    expect(runs).toHaveLength(2);
  });

  it('a cancel during the backoff stops retrying and gives ABORTED', async () => {
    const { tool, attempts } = flaky(['throw', 'throw'], true);
    const { rt, clock, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'retry', retry({ maxAttempts: 3, backoffMs: () => 1_000 }));
    const h = call('flaky');
    await clock.advance(500);
    h.cancel();
    await clock.advance(60_000);
    expectError(rt, await h.result, ErrorCode.ABORTED);
    expect(attempts).toEqual([1]);
  });
});

describe('stage timings (createRuntime({ stageTimings: true }))', () => {
  it('puts per-stage durations (on the injected clock) in result.metadata.durationsMs', async () => {
    const slow = defineTool({
      name: 'slow',
      input: z.object({}),
      execute: async (_a, exec) => {
        await sleep(exec.clock, 250, exec.signal);
        return 'done';
      },
    });
    const { rt, clock, call } = setup({
      tools: [slow],
      stageTimings: true,
      approval: { request: (_r, signal) => sleep(clock, 1_000, signal).then(() => 'allowed-once' as const) },
    });
    rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask' }));
    rt.hooks.on('tools/post-execute', 'note', () => ({ kind: 'accept' }));
    const h = call('slow');
    await clock.advance(1_000);
    await clock.advance(250);
    const r = expectOk(rt, await h.result, 'done');
    expect(r.metadata.durationsMs).toEqual({
      validating: 0,
      preExecute: 0,
      awaitingApproval: 1_000,
      guard: 0,
      executing: 250,
      postExecute: 0,
      finalizing: 0,
      total: 1_250,
    });
  });

  it('error results carry durations too; a runtime without stageTimings puts none', async () => {
    const { tool: stuck, runs } = manualTool('stuck');
    const plain = setup({ tools: [stuck] });
    const unmetered = plain.call('stuck');
    await flushMicrotasks();
    runs[0]!.resolve('x');
    expect((await unmetered.result).metadata.durationsMs).toBeUndefined();
    const { rt, clock, call } = setup({ tools: [stuck], stageTimings: true });
    rt.hooks.on('tools/execute', 'timeout', timeout({ ms: 300 }));
    const h = call('stuck');
    await clock.advance(300);
    const r = await h.result;
    expectError(rt, r, ErrorCode.TIMEOUT);
    expect(r.metadata.durationsMs).toMatchObject({ executing: 300, total: 300 });
    expect(eventsOf(rt, r.callId).map((e) => e.type)).toEqual(['tool/call', 'tool/result']);
  });
});

describe('the per-call deadline (limits.callTimeoutMs, SPEC §8.15)', () => {
  it('is generous by default and part of limits', () => {
    const { rt } = setup();
    expect(rt.limits.callTimeoutMs).toBeGreaterThanOrEqual(60_000);
  });

  it('an execute wrapper that never calls next() settles TIMEOUT at the deadline; the body never runs', async () => {
    const { tool, calls } = echoTool();
    const { rt, clock, call } = setup({ tools: [tool], limits: { callTimeoutMs: 5_000 } });
    rt.hooks.on('tools/execute', 'forgetful', () => new Promise(() => {}));
    const h = call('echo', { text: 'hi' });
    await clock.advance(4_999);
    expect(await isSettled(h.result)).toBe(false);
    await clock.advance(1);
    const r = await h.result;
    expectError(rt, r, ErrorCode.TIMEOUT, '5000 ms');
    expect(calls).toHaveLength(0);
  });

  it('a body that ignores its signal, with no timeout wrapper, settles TIMEOUT; its signal is aborted and its late outcome discarded', async () => {
    const { tool, runs } = manualTool('deaf');
    const { rt, clock, call } = setup({ tools: [tool], limits: { callTimeoutMs: 5_000 } });
    const h = call('deaf');
    await clock.advance(5_000);
    const r = await h.result;
    expectError(rt, r, ErrorCode.TIMEOUT);
    expect(runs[0]!.exec.signal.aborted).toBe(true);
    runs[0]!.resolve('too late');
    await flushMicrotasks();
    expect(only(rt, r.callId, 'warning').code).toBe('LATE_OUTCOME_DISCARDED');
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result', 'warning']);
  });

  it('is disarmed when the call settles: no timer is left behind to keep a process alive', async () => {
    const { tool } = echoTool();
    const { rt, clock, call } = setup({ tools: [tool] });
    expectOk(rt, await call('echo', { text: 'hi' }).result, 'hi');
    expect(clock.pending).toBe(0);
  });

  it('counts from dispatch: time spent waiting for approval is not charged', async () => {
    const { tool } = echoTool();
    let answer!: (a: 'allowed-once') => void;
    const { rt, clock, call } = setup({
      tools: [tool],
      limits: { callTimeoutMs: 1_000, approvalTimeoutMs: 10_000 },
      approval: { request: () => new Promise((res) => (answer = res)) },
    });
    rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask' }));
    const h = call('echo', { text: 'hi' });
    await clock.advance(5_000);
    answer('allowed-once');
    expectOk(rt, await h.result, 'hi');
  });

  it('a stuck call no longer hangs its turn: the turn completes with the TIMEOUT result', async () => {
    const { tool } = manualTool('deaf');
    const { rt, clock } = setup({ tools: [tool], limits: { callTimeoutMs: 5_000 } });
    const model = scriptedModel([{ toolCalls: [{ toolName: 'deaf', input: {} }] }, { text: 'ok' }], { clock });
    const turn = rt.startTurn({ model, input: 'go' });
    let outcome: string | undefined;
    void turn.done.then((o) => (outcome = o.outcome));
    for (let i = 0; !outcome && i < 100; i++) await clock.advance(1_000);
    expect(outcome).toBe('completed');
    const result = rt.log.events().find((e) => e.type === 'tool/result');
    expect(result?.type === 'tool/result' && result.result.error?.code).toBe(ErrorCode.TIMEOUT);
  });
});
