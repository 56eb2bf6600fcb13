/**
 * Before stage 1 (SPEC §2 [decision]): the call is resolved and validated, then its args are
 * deep-frozen. Hostile args are data, never behaviour (issue 2).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ErrorCode } from '../../../src/protocol/index.js';
import { scriptedModel } from '../../../src/adapters/model/index.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { echoTool, eventsOf, expectError, expectOk, isDeepFrozen, only, setup, typesOf } from './harness.js';

describe('resolving and validating a call', () => {
  it('an unknown tool name gives UNKNOWN_TOOL, still with its tool/call and tool/result pair', async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const r = await call('ehco', { text: 'hi' }).result;
    expectError(rt, r, ErrorCode.UNKNOWN_TOOL, 'ehco');
    expect(r.error?.name).toBe('UnknownToolError');
    expect(r.content).toContain('echo'); // names what is available, so the model can correct itself
    const none = setup({ tools: [] });
    const n = await none.call('echo', { text: 'hi' }).result;
    expect(n.error?.message).toBe('unknown tool "echo"; available: (none)');
    const two = setup({ tools: [tool, { ...tool, name: 'grep' }] });
    expect((await two.call('ehco', { text: 'hi' }).result).error?.message).toBe('unknown tool "ehco"; available: echo, grep');
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result']);
  });

  it('arguments that are not JSON give INVALID_ARGS; the body does not run', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const r = await call('echo', '{"text": "hi"').result;
    expectError(rt, r, ErrorCode.INVALID_ARGS, /not valid JSON/);
    expect(calls).toHaveLength(0);
    expect(only(rt, r.callId, 'tool/call').input).toBe('{"text": "hi"');
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result']);
  });

  it('arguments that fail the input schema give INVALID_ARGS naming the field; no listener sees them', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const seen: unknown[] = [];
    rt.hooks.on('tools/pre-execute', 'spy', (c) => void seen.push(c.args));
    rt.tools.guard((c) => void seen.push(c.args), 'spyGuard');
    const r = await call('echo', { text: 42 }).result;
    expectError(rt, r, ErrorCode.INVALID_ARGS, 'text');
    expect(calls).toHaveLength(0);
    expect(seen).toHaveLength(0);
  });

  it('arguments larger than argLimits.maxArgsChars give INVALID_ARGS', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool], argLimits: { maxArgsChars: 100 } });
    const ok = await call('echo', { text: 'x'.repeat(50) }).result;
    expectOk(rt, ok, 'x'.repeat(50));
    const r = await call('echo', { text: 'x'.repeat(200) }).result;
    expectError(rt, r, ErrorCode.INVALID_ARGS, /over the limit of 100/);
    expect(calls).toHaveLength(1);
  });

  it('very deeply nested arguments give INVALID_ARGS, not a stack overflow', async () => {
    const deepTool = defineTool({ name: 'deep', input: z.any(), execute: () => 'ran' });
    const { rt, call } = setup({ tools: [deepTool] });
    const depth = 200_000;
    const text = '['.repeat(depth) + ']'.repeat(depth);
    const r = await call('deep', text).result;
    expectError(rt, r, ErrorCode.INVALID_ARGS, /nested deeper than 64/);
    const obj = await call('deep', `{"a":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}`).result;
    expectError(rt, obj, ErrorCode.INVALID_ARGS, /nested deeper/);
  });

  it('the nesting limit is configurable and nesting within it is accepted', async () => {
    const deepTool = defineTool({ name: 'deep', input: z.any(), execute: () => 'ran' });
    const { rt, call } = setup({ tools: [deepTool], argLimits: { maxArgsDepth: 5 } });
    expectOk(rt, await call('deep', '[[[[[1]]]]]').result, 'ran'); // 5 levels
    expectError(rt, await call('deep', '[[[[[[1]]]]]]').result, ErrorCode.INVALID_ARGS, /nested deeper than 5/);
  });

  it('args are deep-frozen before any listener, guard or body sees them', async () => {
    const { tool, calls } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const frozen: boolean[] = [];
    rt.hooks.on('tools/pre-execute', 'look', (c) => void frozen.push(isDeepFrozen(c.args), Object.isFrozen(c)));
    rt.tools.guard((c) => void frozen.push(isDeepFrozen(c.args)), 'lookGuard');
    const r = await call('echo', { text: 'hi', nested: { n: 1 } }).result;
    expectOk(rt, r, 'hi');
    expect(frozen).toEqual([true, true, true]);
    expect(isDeepFrozen(calls[0]!.args)).toBe(true);
    expect(calls[0]!.args).toEqual({ text: 'hi', nested: { n: 1 } });
  });
});

describe('hostile arguments are data, never behaviour', () => {
  const hostile = [
    '{"__proto__": {"polluted": true}, "text": "hi"}',
    '{"constructor": {"prototype": {"polluted": true}}, "text": "hi"}',
    '{"text": "hi", "nested": {"n": 1, "__proto__": {"polluted": true}}}',
  ];

  for (const input of hostile) {
    it(`z.object input: ${input} pollutes nothing and the tool runs on plain data`, async () => {
      const { tool, calls } = echoTool();
      const { rt, call } = setup({ tools: [tool] });
      const seen: unknown[] = [];
      rt.hooks.on('tools/pre-execute', 'look', (c) => void seen.push((c.args as Record<string, unknown>).polluted));
      const r = await call('echo', input).result;
      expectOk(rt, r, 'hi');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect((Object.prototype as unknown as Record<string, unknown>).polluted).toBeUndefined();
      expect(seen).toEqual([undefined]);
      const args = calls[0]!.args as Record<string, unknown>;
      expect(args.polluted).toBeUndefined();
      expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
      expect(only(rt, r.callId, 'tool/call').input).toBe(input); // the log keeps what the model sent
    });
  }

  for (const input of ['{"__proto__": {"polluted": true}, "a": 1}', '{"constructor": {"prototype": {"polluted": true}}}']) {
    it(`z.record input: ${input} pollutes nothing; the tool runs or fails cleanly`, async () => {
      const bodies: unknown[] = [];
      const recordTool = defineTool({
        name: 'rec',
        input: z.record(z.string(), z.unknown()),
        execute: (args) => {
          bodies.push(args);
          return Object.keys(args).sort().join(',');
        },
      });
      const { rt, call } = setup({ tools: [recordTool] });
      const r = await call('rec', input).result;
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      if (r.isError) {
        expectError(rt, r, ErrorCode.INVALID_ARGS);
      } else {
        expectOk(rt, r);
        const args = bodies[0] as Record<string, unknown>;
        expect(args.polluted).toBeUndefined();
        expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
      }
      // Plain objects made after the call are untouched too.
      const fresh: Record<string, unknown> = JSON.parse('{}');
      expect(fresh.polluted).toBeUndefined();
      expect(eventsOf(rt, r.callId).map((e) => e.type)).toEqual(['tool/call', 'tool/result']);
    });
  }

  it('a __proto__ key kept by a permissive schema stays an own data property, frozen', async () => {
    const bodies: unknown[] = [];
    const anyTool = defineTool({ name: 'any', input: z.object({ meta: z.any() }), execute: (a) => {
      bodies.push(a);
      return 'ok';
    } });
    const { rt, call } = setup({ tools: [anyTool] });
    const r = await call('any', '{"meta": {"__proto__": {"polluted": true}}}').result;
    expectOk(rt, r);
    const meta = (bodies[0] as { meta: Record<string, unknown> }).meta;
    expect(meta.polluted).toBeUndefined();
    expect(Object.getPrototypeOf(meta)).toBe(Object.prototype);
    expect(isDeepFrozen(meta)).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('already-parsed inputs (an adapter may hand over objects instead of JSON text)', () => {
  it('args stay deeply frozen even when the input was only shallowly frozen', async () => {
    const bodies: unknown[] = [];
    const anyTool = defineTool({
      name: 'any',
      input: z.object({ meta: z.any() }),
      execute: (a) => {
        bodies.push(a);
        return 'ok';
      },
    });
    const { rt } = setup({ tools: [anyTool] });
    rt.hooks.on('tools/pre-execute', 'rewriter', (c) => {
      (c.args as { meta: { inner: { n: number } } }).meta.inner.n = 2;
    });
    const input = { meta: Object.freeze({ inner: { n: 1 } }) };
    const r = await rt.runCall({ callId: 'c1', toolName: 'any', input }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'rewriter');
    expect(input.meta.inner.n).toBe(1);
    expect(bodies).toHaveLength(0);
  });

  it('the raw input a listener sees is the logged one, and it cannot be rewritten', async () => {
    const { tool, calls } = echoTool();
    const { rt } = setup({ tools: [tool] });
    rt.hooks.on('tools/pre-execute', 'history-rewriter', (c) => {
      (c.rawInput as { text: string }).text = 'something else';
    });
    const r = await rt.runCall({ callId: 'c1', toolName: 'echo', input: { text: 'hi' } }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'history-rewriter');
    expect(only(rt, 'c1', 'tool/call').input).toEqual({ text: 'hi' });
    expect(calls).toHaveLength(0);
  });
});

describe('a throwing isConcurrencySafe fails closed, by name (issue 11.4)', () => {
  const picky = (body: string[]) =>
    defineTool({
      name: 'picky',
      input: z.object({ n: z.number() }),
      isConcurrencySafe: () => {
        throw new Error('cannot decide');
      },
      execute: ({ n }) => (body.push(String(n)), 'ran'),
    });

  it('a lone call: HOOK_FAILED naming picky.isConcurrencySafe, a hook/failed event, no body', async () => {
    const ran: string[] = [];
    const { rt, call } = setup({ tools: [picky(ran)] });
    const r = await call('picky', { n: 1 }).result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'picky.isConcurrencySafe');
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'isConcurrencySafe', listener: 'picky.isConcurrencySafe', failed: 'closed' });
    expect(only(rt, r.callId, 'hook/failed').message).toContain('cannot decide');
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'hook/failed', 'tool/result']);
    expect(ran).toEqual([]);
  });

  it('in a turn: the call gets HOOK_FAILED and the turn goes on', async () => {
    const ran: string[] = [];
    const { tool } = echoTool();
    const clock = new ManualClock();
    const rt = createRuntime({ tools: [picky(ran), tool], clock });
    const model = scriptedModel(
      [{ toolCalls: [{ toolName: 'picky', input: { n: 1 } }, { toolName: 'echo', input: { text: 'hi' } }] }, { text: 'ok' }],
      { clock },
    );
    const turn = rt.startTurn({ model, input: 'go' });
    let outcome: string | undefined;
    void turn.done.then((o) => (outcome = o.outcome));
    for (let i = 0; !outcome && i < 100; i++) await clock.advance(10);
    expect(outcome).toBe('completed');
    const results = rt.log.events().flatMap((e) => (e.type === 'tool/result' ? [e.result] : []));
    expect(results.map((r) => r.error?.code ?? r.content)).toEqual([ErrorCode.HOOK_FAILED, 'hi']);
    expect(rt.log.events().filter((e) => e.type === 'hook/failed')).toHaveLength(1);
    expect(ran).toEqual([]);
  });
});
