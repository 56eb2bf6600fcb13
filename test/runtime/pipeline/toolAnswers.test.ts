/**
 * What a tool gives back is user data too (SPEC §2.3–2.6): its body's value, its `toContent`,
 * `toMetadata` and `finalizeContent`, its output schema's verdict, a `tools/execute` wrapper's
 * outcome, a post-execute listener's `appliesTo`, and its progress updates. Each odd answer here
 * ends as a typed error with a message that says what was wrong, never as a crash or a lost result.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ErrorCode, type LogEvent, type NewLogEvent } from '../../../src/protocol/index.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { createProgressChannel, MAX_PROGRESS_OUTPUT_CHARS } from '../../../src/runtime/pipeline/progress.js';
import { echoTool, eventsOf, expectError, expectOk, flushMicrotasks, only, setup } from './harness.js';

function valueTool(value: unknown, extra: Partial<Parameters<typeof defineTool>[0]> = {}) {
  return defineTool({ name: 't', input: z.object({}), execute: () => value, ...extra } as Parameters<typeof defineTool>[0]);
}

describe("a tool's own functions answering nonsense", () => {
  for (const [what, content, said] of [
    ['null', null, 'returned null, not a string'],
    ['a number', 5, 'returned number, not a string'],
  ] as const) {
    it(`toContent returning ${what}: TOOL_FAILED "${said}"`, async () => {
      const { rt, call } = setup({ tools: [valueTool({ a: 1 }, { toContent: (() => content) as never })] });
      expectError(rt, await call('t').result, ErrorCode.TOOL_FAILED, `toContent of "t" failed: TypeError: ${said}`);
    });
  }

  for (const [what, metadata, said] of [
    ['null', null, 'returned null, not an object'],
    ['an array', [1], 'returned an array, not an object'],
    ['a string', 'm', 'returned string, not an object'],
  ] as const) {
    it(`toMetadata returning ${what}: TOOL_FAILED "${said}"`, async () => {
      const { rt, call } = setup({ tools: [valueTool('v', { toMetadata: (() => metadata) as never })] });
      expectError(rt, await call('t').result, ErrorCode.TOOL_FAILED, `toMetadata of "t" failed: TypeError: ${said}`);
    });
  }

  it('finalizeContent returning a number: HOOK_FAILED, the content withheld, the metadata kept', async () => {
    const { rt, call } = setup({ tools: [valueTool('v', { toMetadata: () => ({ kept: true }), finalizeContent: (() => 5) as never })] });
    const r = expectError(rt, await call('t').result, ErrorCode.HOOK_FAILED);
    expect(r.error?.message).toBe('finalizeContent of "t" failed: TypeError: returned number, not a string');
    expect(r.content).toBe('HOOK_FAILED: finalizeContent of "t" failed');
    expect(r.metadata).toMatchObject({ kept: true });
  });

  it('an output that does not fit the schema: INVALID_OUTPUT naming each path (the root too), at most five issues, joined by "; "', async () => {
    const nested = valueTool({ a: { b: 'x' } }, { output: z.object({ a: z.object({ b: z.number() }) }) });
    const { rt, call } = setup({ tools: [nested] });
    const r = expectError(rt, await call('t').result, ErrorCode.INVALID_OUTPUT);
    expect(r.error?.message).toMatch(/^output of "t" does not match its output schema: a\.b: \S/);

    const root = setup({ tools: [valueTool('x', { output: z.number() })] });
    expect((await root.call('t').result).error?.message).toMatch(/^output of "t" does not match its output schema: \(root\): \S/);

    const many = setup({ tools: [valueTool({}, { output: z.object({ a: z.number(), b: z.number(), c: z.number(), d: z.number(), e: z.number(), f: z.number(), g: z.number() }) })] });
    const message = (await many.call('t').result).error!.message;
    expect(message.split('; ').map((issue) => issue.replace(/^output of "t" does not match its output schema: /, '').split(':')[0])).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
});

describe("a tools/execute wrapper's outcome, read as user data", () => {
  function wrapped(outcome: unknown) {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/execute', 'w', (() => outcome) as never);
    return { rt, call, calls };
  }

  it('null or a string: HOOK_FAILED "returned no outcome"', async () => {
    for (const outcome of [null, 'ok']) {
      const { rt, call } = wrapped(outcome);
      const r = expectError(rt, await call('echo', { text: 'hi' }).result, ErrorCode.HOOK_FAILED);
      expect(r.error?.message).toBe('tools/execute wrapper "w" failed: TypeError: returned no outcome');
    }
  });

  it('an outcome whose ok cannot be read: HOOK_FAILED with what the getter threw', async () => {
    const { rt, call } = wrapped({
      get ok() {
        throw new Error('ok trap');
      },
    });
    const r = expectError(rt, await call('echo', { text: 'hi' }).result, ErrorCode.HOOK_FAILED);
    expect(r.error?.message).toBe('tools/execute wrapper "w" failed: Error: ok trap');
  });

  it('a failure with a known code keeps its name and message; without a message it says "the tool failed"; a message that is not text is described', async () => {
    const cases: Array<[unknown, { name?: string; code: string; message: string }]> = [
      [{ code: 'TIMEOUT', name: 'SlowError', message: 'took ages' }, { name: 'SlowError', code: 'TIMEOUT', message: 'took ages' }],
      [{ code: 'TIMEOUT', name: 7, message: 'took ages' }, { code: 'TIMEOUT', message: 'took ages' }],
      [{ code: 'TIMEOUT', name: 'SlowError' }, { code: 'TIMEOUT', message: 'the tool failed' }],
      [{ code: 'TIMEOUT', message: 42 }, { code: 'TIMEOUT', message: '42' }],
    ];
    for (const [error, expected] of cases) {
      const { rt, call } = wrapped({ ok: false, error });
      const r = expectError(rt, await call('echo', { text: 'hi' }).result, expected.code);
      expect(r.error).toMatchObject(expected);
      if (expected.name === undefined) expect(r.error?.name).not.toBe('SlowError');
    }
  });

  it('a failure without an error, or with an unreadable code: TOOL_FAILED saying so', async () => {
    const none = wrapped({ ok: false });
    expect((await none.call('echo', { text: 'hi' }).result).error).toMatchObject({ code: 'TOOL_FAILED', message: 'the tool failed (unknown error code "undefined")' });
    const unreadable = wrapped({
      ok: false,
      error: {
        get code() {
          throw new Error('code trap');
        },
        message: 'm',
      },
    });
    expect((await unreadable.call('echo', { text: 'hi' }).result).error).toMatchObject({
      code: 'TOOL_FAILED',
      message: 'm (unknown error code "(unreadable code: Error: code trap)")',
    });
  });

  it("a failure's own content and metadata reach the result; metadata that is not a plain object is dropped", async () => {
    const kept = wrapped({ ok: false, error: { code: 'TOOL_FAILED', message: 'm' }, content: 'what the model should read', metadata: { exitCode: 2 } });
    const r = await kept.call('echo', { text: 'hi' }).result;
    expect(r.content).toBe('what the model should read');
    expect(r.metadata).toMatchObject({ exitCode: 2 });
    for (const metadata of [[1, 2], null, 'm']) {
      const dropped = wrapped({ ok: false, error: { code: 'TOOL_FAILED', message: 'm' }, metadata });
      const d = await dropped.call('echo', { text: 'hi' }).result;
      expect(d.metadata).not.toHaveProperty('0');
      expect(Object.keys(d.metadata).filter((k) => k !== 'durationsMs')).toEqual([]);
    }
  });
});

describe('post-execute appliesTo', () => {
  it('a listener whose appliesTo says no is not run; one whose appliesTo says yes is', async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const ran: string[] = [];
    rt.hooks.on('tools/post-execute', 'yes', () => (ran.push('yes'), { kind: 'accept', metadata: { yes: true } }), { appliesTo: () => true });
    rt.hooks.on('tools/post-execute', 'no', () => (ran.push('no'), { kind: 'block', feedback: 'no' }), { appliesTo: () => false });
    expectOk(rt, await call('echo', { text: 'hi' }).result, 'hi');
    expect(ran).toEqual(['yes']);
  });

  it('an appliesTo that says yes when the stage is chosen and throws when the listener is reached fails closed, naming it', async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    let asked = 0;
    rt.hooks.on('tools/post-execute', 'fickle', () => ({ kind: 'accept' }), {
      appliesTo: () => {
        if (++asked > 1) throw new Error('changed its mind');
        return true;
      },
    });
    const r = expectError(rt, await call('echo', { text: 'hi' }).result, ErrorCode.HOOK_FAILED);
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'tools/post-execute', listener: 'fickle', message: 'appliesTo failed: Error: changed its mind' });
  });

  it("a listener's new value whose content cannot be made fails closed naming the listener (sync and async)", async () => {
    for (const async of [false, true]) {
      const tool = defineTool({
        name: 't',
        input: z.object({}),
        execute: () => 'v',
        toContent: (v: unknown) => {
          if (v === 'bad') throw new Error('cannot show bad');
          return String(v);
        },
      });
      const { rt, call } = setup({ tools: [tool] });
      const answer = { kind: 'accept' as const, value: 'bad' };
      rt.hooks.on('tools/post-execute', 'rewriter', async ? async () => answer : () => answer);
      const r = expectError(rt, await call('t').result, ErrorCode.HOOK_FAILED);
      expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ listener: 'rewriter', message: 'Error: cannot show bad' });
    }
  });
});

describe('tools/result observers', () => {
  it('an observer failing on a call that never got prepared (an unknown tool) is logged open; the result stands', async () => {
    const { rt, call } = setup({ tools: [] });
    rt.hooks.on('tools/result', 'watcher', () => {
      throw new Error('watcher broke');
    });
    const r = expectError(rt, await call('nope').result, ErrorCode.UNKNOWN_TOOL, 'unknown tool "nope"; available: (none)');
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'tools/result', listener: 'watcher', failed: 'open', message: 'Error: watcher broke' });
  });
});

describe('progress after an abort', () => {
  it('a body that reports progress only after its call was cancelled logs no progress event', async () => {
    let report: ((u: { message: string }) => void) | undefined;
    let aborted!: () => void;
    const started = new Promise<void>((r) => (aborted = r));
    const tool = defineTool({
      name: 'stubborn',
      input: z.object({}),
      execute: (_a, exec) =>
        new Promise<string>(() => {
          report = exec.progress;
          exec.signal.addEventListener('abort', () => aborted());
        }),
    });
    const { rt, clock, call } = setup({ tools: [tool] });
    const h = call('stubborn');
    await flushMicrotasks();
    h.cancel('stop');
    await started;
    report!({ message: 'still going' });
    await clock.advance(60_000); // the abort grace: the body never settles
    const r = await h.result;
    expect(r.isError).toBe(true);
    await flushMicrotasks();
    expect(eventsOf(rt, r.callId).filter((e) => e.type === 'tool/progress')).toEqual([]);
  });
});

describe('a progress channel: what each tool/progress event holds', () => {
  function channel(intervalMs = 100) {
    const clock = new ManualClock(0);
    const events: NewLogEvent[] = [];
    const ch = createProgressChannel({ clock, intervalMs, place: { callId: 'c', toolName: 't' }, append: (e) => events.push(e) });
    return { clock, events, ch };
  }
  const fields = (e: NewLogEvent | LogEvent) => {
    const { type: _t, callId: _c, toolName: _n, ...rest } = e as Record<string, unknown>;
    return rest;
  };

  it('only the fields an update gave: no empty output, no zero droppedChars', () => {
    const { events, ch } = channel();
    ch.report({ message: 'starting' });
    expect(events.map(fields)).toEqual([{ message: 'starting', updates: 1 }]);
  });

  it('progress and total only when finite; output that is not text ignored; an unreadable update ignored', async () => {
    const { clock, events, ch } = channel();
    ch.report({ progress: 1, total: 10, output: 'a' });
    await clock.advance(100);
    ch.report({ progress: Number.NaN, total: Infinity, output: 5 as unknown as string });
    await clock.advance(100);
    ch.report({
      get output(): string {
        throw new Error('trap');
      },
    });
    await clock.advance(100);
    expect(events.map(fields)).toEqual([{ progress: 1, total: 10, output: 'a', updates: 1 }, { updates: 1 }]);
  });

  it('output beyond the bound keeps the newest characters and counts the dropped ones; exactly the bound drops none', () => {
    const exact = channel();
    exact.ch.report({ output: 'x'.repeat(MAX_PROGRESS_OUTPUT_CHARS) });
    expect(exact.events.map(fields)).toEqual([{ output: 'x'.repeat(MAX_PROGRESS_OUTPUT_CHARS), updates: 1 }]);

    const over = channel();
    over.ch.report({ output: `ab${'y'.repeat(MAX_PROGRESS_OUTPUT_CHARS)}` });
    expect(over.events.map(fields)).toEqual([{ output: 'y'.repeat(MAX_PROGRESS_OUTPUT_CHARS), droppedChars: 2, updates: 1 }]);
  });

  it('a message of 500 characters is kept whole; a longer one is cut to 499 and an ellipsis', () => {
    const { events, ch, clock } = channel(0);
    ch.report({ message: 'm'.repeat(500) });
    void clock;
    ch.report({ message: 'n'.repeat(501) });
    expect(events.map((e) => (e as { message?: string }).message)).toEqual(['m'.repeat(500), `${'n'.repeat(499)}…`]);
  });

  it('updates within the interval are coalesced into one event; after close nothing more is logged', async () => {
    const { clock, events, ch } = channel(100);
    ch.report({ output: 'a' });
    ch.report({ output: 'b' });
    ch.report({ output: 'c', message: 'three' });
    expect(events.map(fields)).toEqual([{ output: 'a', updates: 1 }]);
    await clock.advance(100);
    expect(events.map(fields)).toEqual([
      { output: 'a', updates: 1 },
      { output: 'bc', message: 'three', updates: 2 },
    ]);
    ch.report({ output: 'd' });
    ch.close();
    ch.close();
    ch.report({ output: 'e' });
    await clock.advance(1_000);
    expect(events.map(fields).slice(2)).toEqual([{ output: 'd', updates: 1 }]);
  });
});
