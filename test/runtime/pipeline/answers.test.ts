/**
 * What a listener, a guard, a tool's preview and an approval service answer is user data (SPEC
 * §2.1–2.5, §8.3): each answer is read once, anything that is not a decision fails the call closed
 * (HOOK_FAILED, naming the listener and saying what it got without echoing it), and an approval
 * service's answer other than the three denies. Each case here is one answer a user could write,
 * judged by what the model and the log get.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { ErrorCode, type ApprovalAnswer, type PostExecuteDecision, type PreExecuteDecision } from '../../../src/protocol/index.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import type { Guard } from '../../../src/runtime/hooks.js';
import type { ApprovalRequest, ApprovalService } from '../../../src/runtime/pipeline/approvalService.js';
import { listenerTimer } from '../../../src/runtime/pipeline/listenerTimer.js';
import { echoTool, eventsOf, expectError, expectOk, flushMicrotasks, only, setup } from './harness.js';

const asPre = (v: unknown) => v as PreExecuteDecision;
const asPost = (v: unknown) => v as PostExecuteDecision;

/** A pre-execute listener (registered last) that allows and counts how often it was consulted. */
function countConsulted(rt: ReturnType<typeof setup>['rt'], name: string): { times: number } {
  const seen = { times: 0 };
  rt.hooks.on('tools/pre-execute', name, () => (seen.times++, { kind: 'allow' }));
  return seen;
}

describe('a pre-execute answer that is not a decision fails the call closed, saying what it was', () => {
  const cases: Array<[string, unknown, string]> = [
    ['null', null, '(null)'],
    ['a number', 42, '(number)'],
    ['a string', 'allow', '(string)'],
    ['a function carrying a kind', Object.assign(() => {}, { kind: 'allow' }), '(function)'],
    ['an object without a kind', {}, '(an object without a kind)'],
    ['an object whose then cannot be read', { get then() { throw new Error('then trap'); } }, '(an object without a kind)'],
    ['a long unknown kind (cut to 40 characters)', { kind: 'k'.repeat(100) }, `(kind ${JSON.stringify('k'.repeat(40))})`],
    ['an unreadable kind', { get kind() { throw new Error('kind trap'); } }, '(an object whose kind cannot be read)'],
    ['a deny without a reason', { kind: 'deny' }, '(kind "deny")'],
    ['a deny whose reason is not text', { kind: 'deny', reason: 7 }, '(kind "deny")'],
    ['an ask whose reason is not text', { kind: 'ask', reason: 7 }, '(kind "ask")'],
    ['another kind with a reason', { kind: 'block', reason: 'no' }, '(kind "block")'],
    ['an allow whose rule is not text', { kind: 'allow', rule: 5 }, '(kind "allow")'],
    ['a deny whose rule is a list (it has a slice of its own)', { kind: 'deny', reason: 'no', rule: ['r'] }, '(kind "deny")'],
  ];
  for (const [what, answer, described] of cases) {
    it(`${what}: HOOK_FAILED, "returned an invalid decision ${described}"`, async () => {
      const { tool, calls } = echoTool();
      const { rt, call } = setup({ tools: [tool] });
      rt.hooks.on('tools/pre-execute', 'sloppy', () => asPre(answer));
      const r = await call('echo', { text: 'hi' }).result;
      expectError(rt, r, ErrorCode.HOOK_FAILED, `returned an invalid decision ${described}`);
      expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'tools/pre-execute', listener: 'sloppy', message: `TypeError: returned an invalid decision ${described}` });
      expect(calls).toHaveLength(0);
    });
  }

  it('the same answers from an async listener fail the same way', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'sloppy', async () => asPre({ kind: 'ask', reason: 7 }));
    expectError(rt, await call('echo', { text: 'hi' }).result, ErrorCode.HOOK_FAILED, 'returned an invalid decision (kind "ask")');
    expect(calls).toHaveLength(0);
  });
});

describe('pre-execute decisions, as given', () => {
  it("a decision's rule is cut to 500 characters; a deny's reason reaches the model", async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'rules', (c) => (c.args as { text: string }).text === 'go' ? { kind: 'allow', rule: 'r'.repeat(600) } : { kind: 'deny', reason: 'not that', rule: 'short rule' });
    const allowed = expectOk(rt, await call('echo', { text: 'go' }).result, 'go');
    expect(allowed.decision).toEqual({ stage: 'pre-execute', outcome: 'allow', by: 'rules', rule: 'r'.repeat(500) });
    const denied = expectError(rt, await call('echo', { text: 'stop' }).result, ErrorCode.POLICY_DENIED, 'not that');
    expect(denied.decision).toEqual({ stage: 'pre-execute', outcome: 'deny', by: 'rules', rule: 'short rule' });
  });

  it('a listener calling next() twice runs the rest of the chain once', async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    let inner = 0;
    rt.hooks.on('tools/pre-execute', 'twice', (_c, next) => {
      void next();
      return next();
    });
    rt.hooks.on('tools/pre-execute', 'inner', () => {
      inner++;
      return { kind: 'allow' };
    });
    expectOk(rt, await call('echo', { text: 'hi' }).result, 'hi');
    expect(inner).toBe(1);
  });

  it('a listener that starts next() late (after an await) without waiting: a failure further down still fails the call', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'hasty', async (_c, next) => {
      await Promise.resolve();
      void next();
      return { kind: 'allow' };
    });
    rt.hooks.on('tools/pre-execute', 'late-failure', async () => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
      throw new Error('the policy store is down');
    });
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'the policy store is down');
    expect(only(rt, r.callId, 'hook/failed').listener).toBe('late-failure');
    expect(calls).toHaveLength(0);
  });

  it('a listener handing over after the stage decided (from a timer) starts nobody', async () => {
    const { tool } = echoTool();
    const { rt, clock, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'decides-now', (_c, next) => {
      clock.setTimeout(() => void Promise.resolve(next()).catch(() => {}), 10);
      return { kind: 'allow' };
    });
    const later = countConsulted(rt, 'later');
    expectOk(rt, await call('echo', { text: 'hi' }).result, 'hi');
    await clock.advance(10);
    expect(later.times).toBe(0);
  });

  it('a listener handing over after the stage decided asynchronously starts nobody, and its next() says the stage is over', async () => {
    const { tool } = echoTool();
    const { rt, clock, call } = setup({ tools: [tool] });
    let handOver: (() => unknown) | undefined;
    rt.hooks.on('tools/pre-execute', 'decides-later', async (_c, next) => {
      handOver = next;
      return { kind: 'allow' };
    });
    const later = countConsulted(rt, 'later');
    expectOk(rt, await call('echo', { text: 'hi' }).result, 'hi');
    await clock.advance(10);
    await expect(Promise.resolve(handOver!())).rejects.toThrow('the pre-execute stage is over');
    expect(later.times).toBe(0);
  });

  it('a listener handing over after its stage timed out starts nobody', async () => {
    const { tool } = echoTool();
    const { rt, clock, call } = setup({ tools: [tool], limits: { hookTimeoutMs: 100 } });
    rt.hooks.on('tools/pre-execute', 'slow', (_c, next) => new Promise((resolve) => clock.setTimeout(() => resolve(Promise.resolve(next()).catch(() => ({ kind: 'allow' as const }))), 150)));
    const later = countConsulted(rt, 'later');
    const h = call('echo', { text: 'hi' });
    await clock.advance(100);
    expectError(rt, await h.result, ErrorCode.HOOK_FAILED, 'no answer within 100 ms');
    await clock.advance(50);
    await flushMicrotasks();
    expect(later.times).toBe(0);
  });
});

describe('a post-execute answer that is not a decision fails the call closed', () => {
  const cases: Array<[string, unknown, string]> = [
    ['a block without feedback', { kind: 'block' }, '(kind "block")'],
    ['a block whose feedback is a list', { kind: 'block', feedback: ['no'] }, '(kind "block")'],
    ['an accept whose content is not text', { kind: 'accept', content: 5 }, '(kind "accept")'],
    ['an accept whose metadata is text', { kind: 'accept', metadata: 'm' }, '(kind "accept")'],
    ['an accept whose metadata is null', { kind: 'accept', metadata: null }, '(kind "accept")'],
    ['an unknown kind', { kind: 'allow' }, '(kind "allow")'],
    ['null', null, '(null)'],
    ['a string', 'accept', '(string)'],
    ['a function carrying an accept', Object.assign(() => {}, { kind: 'accept' }), '(function)'],
  ];
  for (const [what, answer, described] of cases) {
    it(`${what}: HOOK_FAILED, "returned an invalid decision ${described}"`, async () => {
      const { tool } = echoTool();
      const { rt, call } = setup({ tools: [tool] });
      rt.hooks.on('tools/post-execute', 'sloppy', () => asPost(answer));
      const r = await call('echo', { text: 'hi' }).result;
      expectError(rt, r, ErrorCode.HOOK_FAILED, `returned an invalid decision ${described}`);
      expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'tools/post-execute', listener: 'sloppy' });
    });
  }

  it('an accept keeps what it does not replace: content alone, metadata merged, both together', async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/post-execute', 'tag', () => ({ kind: 'accept', metadata: { checked: true } }));
    rt.hooks.on('tools/post-execute', 'shout', (draft) => ({ kind: 'accept', content: draft.content.toUpperCase() }));
    const r = expectOk(rt, await call('echo', { text: 'hi' }).result, 'HI');
    expect(r.value).toBe('hi');
    expect(r.metadata).toMatchObject({ checked: true });
  });
});

describe('guard answers', () => {
  const failing: Array<[string, unknown, string]> = [
    ['a number', 42, 'returned number; a guard returns a string or { reason, rule } (deny) or undefined'],
    ['null', null, 'returned object;'],
    ['a thenable carrying a reason', { then: () => {}, reason: 'looks like a denial' }, 'returned a promise;'],
    ['a denial whose reason is not text', { reason: 5 }, 'returned object;'],
    ['a denial whose rule is not text', { reason: 'no', rule: 5 }, 'returned object;'],
    ['a denial whose reason is a list', { reason: ['no'] }, 'returned object;'],
    ['a denial whose rule is a list (it has a slice of its own)', { reason: 'no', rule: ['r'] }, 'returned object;'],
  ];
  for (const [what, answer, message] of failing) {
    it(`${what} fails closed: HOOK_FAILED, "${message}"`, async () => {
      const { tool, calls } = echoTool();
      const { rt, call } = setup({ tools: [tool] });
      rt.tools.guard((() => answer) as unknown as Guard, 'odd-guard');
      const r = await call('echo', { text: 'hi' }).result;
      expectError(rt, r, ErrorCode.HOOK_FAILED, message);
      expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'tools/guard', listener: 'odd-guard' });
      expect(calls).toHaveLength(0);
    });
  }

  it('{ reason } denies with the reason; { reason, rule } names the rule, cut to 500 characters', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const guardExits: unknown[] = [];
    rt.onStage((e) => void (e.type === 'stage/exited' && e.stage === 'guard' && guardExits.push(e.outcome)));
    rt.tools.guard((c) => ((c.args as { text: string }).text === 'a' ? { reason: 'not a' } : { reason: 'not b', rule: 'g'.repeat(600) }), 'named');
    const a = expectError(rt, await call('echo', { text: 'a' }).result, ErrorCode.GUARD_DENIED, 'not a');
    expect(a.decision).toStrictEqual({ stage: 'guard', outcome: 'deny', by: 'named' }); // no rule key at all
    const b = expectError(rt, await call('echo', { text: 'b' }).result, ErrorCode.GUARD_DENIED, 'not b');
    expect(b.decision).toStrictEqual({ stage: 'guard', outcome: 'deny', by: 'named', rule: 'g'.repeat(500) });
    expect(calls).toHaveLength(0);
    // The stage stream says the same (an inspector, the telemetry's dsh.stage.guard event).
    expect(guardExits).toEqual([
      { kind: 'deny', code: ErrorCode.GUARD_DENIED, message: 'not a', listener: 'named' },
      { kind: 'deny', code: ErrorCode.GUARD_DENIED, message: 'not b', listener: 'named' },
    ]);
  });
});

/** An approval service answering `answer`, recording what it was asked. */
function answering(answer: (req: ApprovalRequest, signal: AbortSignal) => unknown) {
  const asked: ApprovalRequest[] = [];
  const service: ApprovalService = { request: async (req, signal) => (asked.push(req), answer(req, signal) as ApprovalAnswer) };
  return { service, asked };
}

const askEverything = (rt: ReturnType<typeof setup>['rt']) => rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask', reason: 'check' }));
const warningsOf = (rt: ReturnType<typeof setup>['rt'], callId: string) => eventsOf(rt, callId).filter((e) => e.type === 'warning');

describe('approval answers', () => {
  const invalid: Array<[string, unknown, string]> = [
    ['null', null, 'the approval service answered object; treated as denied'],
    ['a number', 1, 'the approval service answered number; treated as denied'],
    ['a long string (its first 100 characters quoted)', 'y'.repeat(300), `the approval service answered ${JSON.stringify('y'.repeat(100))}; treated as denied`],
    ['an object with another answer', { answer: 'yes' }, 'the approval service answered object; treated as denied'],
  ];
  for (const [what, answer, message] of invalid) {
    it(`${what}: denied, with the warning APPROVAL_ANSWER_INVALID "${message.slice(0, 60)}…"`, async () => {
      const { tool, calls } = echoTool();
      const { rt, call } = setup({ tools: [tool], approval: answering(() => answer).service });
      askEverything(rt);
      const r = await call('echo', { text: 'hi' }).result;
      expectError(rt, r, ErrorCode.APPROVAL_DENIED);
      expect(only(rt, r.callId, 'tool/approval-answer').answer).toBe('denied');
      expect(only(rt, r.callId, 'warning')).toMatchObject({ code: 'APPROVAL_ANSWER_INVALID', message });
      expect(calls).toHaveLength(0);
    });
  }

  it('a denial without a reason, or with a blank one, is a plain denial: no warning, no reason passed on', async () => {
    const { tool } = echoTool();
    let n = 0;
    const { rt, call } = setup({ tools: [tool], approval: answering(() => (n++ === 0 ? { answer: 'denied' } : { answer: 'denied', reason: '   ' })).service });
    askEverything(rt);
    for (let i = 0; i < 2; i++) {
      const r = await call('echo', { text: 'hi' }).result;
      expectError(rt, r, ErrorCode.APPROVAL_DENIED);
      const answer = only(rt, r.callId, 'tool/approval-answer');
      expect(answer.answer).toBe('denied');
      expect(answer).not.toHaveProperty('reason');
      expect(warningsOf(rt, r.callId)).toEqual([]);
    }
  });

  it("a denial's reason is trimmed and cut to 2,000 characters", async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool], approval: answering(() => ({ answer: 'denied', reason: `  ${'w'.repeat(2_500)}` })).service });
    askEverything(rt);
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.APPROVAL_DENIED);
    expect(only(rt, r.callId, 'tool/approval-answer')).toMatchObject({ answer: 'denied', reason: 'w'.repeat(2_000) });
  });

  it('without an approval service an ask denies quietly (no failure warning)', async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    askEverything(rt);
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.APPROVAL_DENIED);
    expect(warningsOf(rt, r.callId)).toEqual([]);
  });

  it('a service that rejects because the question was withdrawn (a cancel) logs no failure', async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({
      tools: [tool],
      approval: { request: (_req, signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('withdrawn')))) },
    });
    askEverything(rt);
    const h = call('echo', { text: 'hi' });
    await flushMicrotasks();
    h.cancel('stop');
    const r = await h.result;
    expectError(rt, r, ErrorCode.ABORTED_BEFORE_DISPATCH);
    expect(warningsOf(rt, r.callId)).toEqual([]);
  });

  it('"suspend" outside a turn cannot suspend: denied, with APPROVAL_SUSPEND_UNAVAILABLE; after a withdrawal it changes nothing', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool], approval: answering(() => 'suspend').service });
    askEverything(rt);
    const r = await call('echo', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.APPROVAL_DENIED);
    expect(only(rt, r.callId, 'tool/approval-answer').answer).toBe('denied');
    expect(only(rt, r.callId, 'warning')).toMatchObject({ code: 'APPROVAL_SUSPEND_UNAVAILABLE', message: expect.stringContaining('only a call of a running turn can suspend') });

    const late = setup({
      tools: [tool],
      approval: { request: (_req, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve('suspend' as ApprovalAnswer))) },
    });
    askEverything(late.rt);
    const h = late.call('echo', { text: 'hi' });
    await flushMicrotasks();
    h.cancel('stop');
    const cancelled = await h.result;
    await flushMicrotasks();
    expectError(late.rt, cancelled, ErrorCode.ABORTED_BEFORE_DISPATCH);
    expect(warningsOf(late.rt, cancelled.callId)).toEqual([]);
    expect(calls).toHaveLength(0);
  });
});

describe('what an allowed-always remembers', () => {
  /** A tool taking any JSON object, so the key order and nesting the model sent reach the approval key. */
  function anyArgs(extra: { approvalKeys?: (args: Record<string, unknown>) => readonly string[] | undefined } = {}) {
    const bodies: unknown[] = [];
    const tool = defineTool({
      name: 'any',
      input: z.record(z.string(), z.unknown()),
      ...extra,
      execute: (args) => (bodies.push(args), 'done'),
    });
    return { tool, bodies };
  }

  async function session(extra: Parameters<typeof anyArgs>[0] = {}) {
    const { tool } = anyArgs(extra);
    const asked: string[] = [];
    const { rt } = setup({ tools: [tool], approval: { request: async (req) => (asked.push(JSON.stringify(req.args)), 'allowed-always') } });
    askEverything(rt);
    let n = 0;
    const run = async (input: string) => {
      const r = await rt.runCall({ callId: `c${++n}`, toolName: 'any', input }).result;
      expectOk(rt, r, 'done');
      return only(rt, r.callId, 'tool/approval-answer').answer;
    };
    return { run, asked };
  }

  it('the same object with its keys in another order, at any depth, is the same approval', async () => {
    const { run } = await session();
    expect(await run('{"a":1,"b":{"c":[1,{"d":2,"e":3}],"f":null}}')).toBe('allowed-always');
    expect(await run('{"b":{"f":null,"c":[1,{"e":3,"d":2}]},"a":1}')).toBe('remembered');
  });

  it('arrays keep their order and their boundaries: [1,2] is not [2,1], [12], [[1],[2]] nor {"0":1,"1":2}; a string is not a number', async () => {
    const { run } = await session();
    expect(await run('{"a":[1,2]}')).toBe('allowed-always');
    for (const other of ['{"a":[2,1]}', '{"a":[12]}', '{"a":[[1],[2]]}', '{"a":{"0":1,"1":2}}', '{"a":"[1,2]"}', '{"a":[1,2],"b":null}']) {
      expect(await run(other), other).toBe('allowed-always');
    }
    expect(await run('{ "a" : [ 1 , 2 ] }')).toBe('remembered');
  });

  it("a tool's approvalKeys: every key must have been approved; undefined or a throw remembers nothing", async () => {
    const byParts = await session({ approvalKeys: (args) => args.parts as string[] });
    expect(await byParts.run('{"parts":["git status","rm -rf x"]}')).toBe('allowed-always');
    expect(await byParts.run('{"parts":["rm -rf x","git status"]}')).toBe('remembered');
    expect(await byParts.run('{"parts":["git status","rm -rf y"]}')).toBe('allowed-always');
    expect(await byParts.run('{"parts":["git status"]}')).toBe('remembered');

    const never = await session({ approvalKeys: () => undefined });
    expect(await never.run('{"x":1}')).toBe('allowed-always');
    expect(await never.run('{"x":1}')).toBe('allowed-always');

    const throwing = await session({
      approvalKeys: () => {
        throw new Error('cannot parse');
      },
    });
    expect(await throwing.run('{"x":1}')).toBe('allowed-always');
    expect(await throwing.run('{"x":1}')).toBe('allowed-always');
    expect(throwing.asked).toHaveLength(2);
  });
});

describe('the approval preview', () => {
  function previewing(preview: (args: { text: string }, options: { signal: AbortSignal }) => unknown) {
    const seen: AbortSignal[] = [];
    const tool = defineTool({
      name: 'change',
      input: z.object({ text: z.string() }),
      preview: ((args: { text: string }, options: { signal: AbortSignal }) => (seen.push(options.signal), preview(args, options))) as never,
      execute: (args) => args.text,
    });
    return { tool, seen };
  }

  it('is made only for a question that is asked: not for a deny, not for a remembered answer', async () => {
    const { tool, seen } = previewing((args) => ({ kind: 'command', text: args.text }));
    const { rt, call } = setup({ tools: [tool], approval: answering(() => 'allowed-always').service });
    rt.hooks.on('tools/pre-execute', 'policy', (c) => ((c.args as { text: string }).text === 'no' ? { kind: 'deny', reason: 'no' } : { kind: 'ask' }));
    expectError(rt, await call('change', { text: 'no' }).result, ErrorCode.POLICY_DENIED);
    expect(seen).toHaveLength(0);
    expectOk(rt, await call('change', { text: 'yes' }).result, 'yes');
    expect(seen).toHaveLength(1);
    expectOk(rt, await call('change', { text: 'yes' }).result, 'yes');
    expect(seen).toHaveLength(1);
  });

  it('an asynchronous ask gets its preview too', async () => {
    const { tool } = echoTool();
    const { service, asked } = answering(() => 'allowed-once');
    const { rt, call } = setup({ tools: [tool], approval: service });
    rt.hooks.on('tools/pre-execute', 'ask-later', async () => ({ kind: 'ask' }));
    expectOk(rt, await call('echo', { text: 'hi' }).result, 'hi');
    expect(asked[0]!.preview).toEqual({ kind: 'args', text: '{\n  "text": "hi"\n}' });
  });

  it('a preview that throws, or answers nothing: the arguments (with why, when it threw)', async () => {
    const thrower = previewing(() => {
      throw new Error('no diff today');
    });
    const nothing = previewing(() => undefined);
    for (const [tool, text] of [
      [thrower.tool, '{\n  "text": "a"\n}\n(no preview of the change: Error: no diff today)'],
      [nothing.tool, '{\n  "text": "a"\n}'],
    ] as const) {
      const { service, asked } = answering(() => 'allowed-once');
      const { rt, call } = setup({ tools: [tool], approval: service });
      askEverything(rt);
      expectOk(rt, await call('change', { text: 'a' }).result, 'a');
      expect(asked[0]!.preview).toEqual({ kind: 'args', text });
    }
  });

  it('a preview that takes longer than hookTimeoutMs: its signal is aborted, the arguments are shown with why', async () => {
    const hanging = previewing(() => new Promise(() => {}));
    const { service, asked } = answering(() => 'allowed-once');
    const { rt, clock, call } = setup({ tools: [hanging.tool], approval: service, limits: { hookTimeoutMs: 500 } });
    askEverything(rt);
    const h = call('change', { text: 'c' });
    await clock.advance(499);
    expect(asked).toHaveLength(0);
    expect(hanging.seen[0]!.aborted).toBe(false);
    await clock.advance(1);
    expectOk(rt, await h.result, 'c');
    expect(asked[0]!.preview).toEqual({ kind: 'args', text: '{\n  "text": "c"\n}\n(no preview of the change: it took longer than 500 ms)' });
    expect(hanging.seen[0]!.aborted).toBe(true);
    expect((hanging.seen[0]!.reason as Error).message).toBe('preview timed out');
  });
});

describe('args JSON cannot write (a BigInt made by the input schema)', () => {
  it('are asked about each time, shown as "cannot be shown", never crash the call', async () => {
    const tool = defineTool({ name: 'big', input: z.object({ n: z.number().transform((n) => BigInt(n)) }), execute: () => 'ok' });
    const { service, asked } = answering(() => 'allowed-always');
    const { rt, call } = setup({ tools: [tool], approval: service });
    askEverything(rt);
    for (let i = 0; i < 2; i++) {
      const r = expectOk(rt, await call('big', { n: 1 }).result, 'ok');
      expect(only(rt, r.callId, 'tool/approval-answer').answer).toBe('allowed-always');
    }
    expect(asked).toHaveLength(2);
    expect(asked[0]!.preview?.kind).toBe('args');
    expect(asked[0]!.preview?.text).toMatch(/^\(the arguments cannot be shown: TypeError: .*BigInt/);
  });
});

describe('listenerTimer: one budget per listener waited on', () => {
  it('waiting on the same listener again does not extend its budget; another listener gets a full one', async () => {
    const clock = new ManualClock(0);
    const expired: string[] = [];
    const timer = listenerTimer(clock, 100, (l) => expired.push(l));
    timer.waitOn('a');
    await clock.advance(99);
    timer.waitOn('a');
    await clock.advance(1);
    expect(expired).toEqual(['a']);

    const other: string[] = [];
    const t2 = listenerTimer(clock, 100, (l) => other.push(l));
    t2.waitOn('a');
    await clock.advance(99);
    t2.waitOn('b');
    await clock.advance(99);
    expect(other).toEqual([]);
    await clock.advance(1);
    expect(other).toEqual(['b']);
  });

  it('expires once; after stop() or an expiry, nothing is armed again', async () => {
    const clock = new ManualClock(0);
    const expired: string[] = [];
    const timer = listenerTimer(clock, 100, (l) => expired.push(l));
    timer.waitOn('a');
    await clock.advance(100);
    timer.waitOn('b');
    await clock.advance(1_000);
    expect(expired).toEqual(['a']);

    const stopped: string[] = [];
    const t2 = listenerTimer(clock, 100, (l) => stopped.push(l));
    t2.waitOn('a');
    t2.stop();
    t2.waitOn('b');
    await clock.advance(1_000);
    expect(stopped).toEqual([]);
  });
});
