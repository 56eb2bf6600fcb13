/**
 * Stage 6: `finalizeContent` and the `tools/result` observers (SPEC §2.6, §8.6, §8.8), and the
 * frozen result they see.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ErrorCode, type ToolResult } from '../../../src/protocol/index.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { ToolError } from '../../../src/runtime/toolError.js';
import { toolOutput } from '../../../src/runtime/pipeline/draft.js';
import { echoTool, expectError, expectOk, isDeepFrozen, isSettled, only, setup, typesOf } from './harness.js';


/** `list` returns `{ files }`, validated by an output schema, shown as one file a line. */
function listTool(options: { finalizeContent?: (c: string) => string; files?: unknown } = {}) {
  return defineTool({
    name: 'list',
    input: z.object({}),
    output: z.object({ files: z.array(z.string()) }),
    execute: () => (options.files ?? { files: ['a.ts', 'b.ts'] }) as { files: string[] },
    toContent: (v) => v.files.join('\n'),
    finalizeContent: options.finalizeContent,
  });
}

describe('finalizeContent', () => {
  it('is called exactly once, synchronously, after post-execute, with the last content', async () => {
    const order: string[] = [];
    const seen: string[] = [];
    let logAtFinalize: string[] = [];
    let rtRef: ReturnType<typeof setup>['rt'] | undefined;
    const tool = listTool({
      finalizeContent: (c) => {
        order.push('finalize');
        seen.push(c);
        logAtFinalize = rtRef!.log.events().map((e) => e.type);
        return `${c}\n(2 entries)`;
      },
    });
    const { rt, call } = setup({ tools: [tool] });
    rtRef = rt;
    rt.hooks.on('tools/post-execute', 'post', async (d) => (order.push('post'), { kind: 'accept', content: d.content.toUpperCase() }));
    rt.hooks.on('tools/result', 'observer', (r) => void order.push(`observer:${r.content}`));
    const r = await call('list').result;
    expectOk(rt, r, 'A.TS\nB.TS\n(2 entries)');
    expect(order).toEqual(['post', 'finalize', 'observer:A.TS\nB.TS\n(2 entries)']);
    expect(seen).toEqual(['A.TS\nB.TS']);
    expect(logAtFinalize).toEqual(['tool/call']);
  });

  it('a finalizeContent that throws or returns a non-string (e.g. a promise) fails closed', async () => {
    const { rt, call } = setup({
      tools: [
        listTool({
          finalizeContent: () => {
            throw new Error('bad fix');
          },
        }),
        defineTool({ name: 'async-fix', input: z.object({}), execute: () => 'secret', finalizeContent: (async (c: string) => c) as never }),
      ],
    });
    const r = await call('list').result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'finalizeContent');
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'finalizeContent', failed: 'closed' });
    expect(r.content).not.toContain('a.ts');
    const a = await call('async-fix').result;
    expectError(rt, a, ErrorCode.HOOK_FAILED);
    expect(a.content).not.toContain('secret');
  });
});

describe('tools/result observers', () => {
  it('get the deeply frozen result, once, after finalizeContent; it is the result logged and returned', async () => {
    const { rt, call } = setup({ tools: [listTool()] });
    rt.hooks.on('tools/post-execute', 'meta', () => ({ kind: 'accept', metadata: { tags: ['x'] } }));
    const got: ToolResult[] = [];
    const attempts: boolean[] = [];
    rt.hooks.on('tools/result', 'look', (res) => {
      got.push(res);
      attempts.push(Reflect.set(res, 'content', 'changed'));
      attempts.push(Reflect.set(res.value as { files: string[] }, 'files', []));
      attempts.push(Reflect.set(res.metadata.tags as string[], 0, 'y'));
    });
    const r = await call('list').result;
    expectOk(rt, r, 'a.ts\nb.ts');
    expect(got).toHaveLength(1);
    expect(isDeepFrozen(got[0])).toBe(true);
    expect(attempts).toEqual([false, false, false]);
    expect(got[0]).toBe(r);
    expect(r.value).toEqual({ files: ['a.ts', 'b.ts'] });
    expect(r.metadata).toEqual({ tags: ['x'] });
  });

  it('are called for error results too', async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const codes: unknown[] = [];
    rt.hooks.on('tools/result', 'look', (res) => void codes.push(res.error?.code));
    await call('nope').result;
    expect(codes).toEqual([ErrorCode.UNKNOWN_TOOL]);
  });

  it('a throwing observer is logged (hook/failed, open) and ignored; other observers still run', async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    const later: string[] = [];
    rt.hooks.on('tools/result', 'broken', () => {
      throw new Error('observer bug');
    });
    rt.hooks.on('tools/result', 'fine', (res) => void later.push(res.content));
    const r = await call('echo', { text: 'hi' }).result;
    expectOk(rt, r, 'hi');
    expect(later).toEqual(['hi']);
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'hook/failed', 'tool/result']);
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'tools/result', listener: 'broken', failed: 'open' });
    expect(only(rt, r.callId, 'hook/failed').message).toContain('observer bug');
  });

  it('an async observer that rejects is logged the same way and cannot affect the result', async () => {
    const { tool } = echoTool();
    const { rt, call } = setup({ tools: [tool] });
    rt.hooks.on('tools/result', 'async-broken', (async () => {
      throw new Error('async observer bug');
    }) as never);
    const r = await call('echo', { text: 'hi' }).result;
    expectOk(rt, r, 'hi');
    await isSettled(Promise.resolve());
    const failed = rt.log.events().filter((e) => e.type === 'hook/failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ hook: 'tools/result', listener: 'async-broken', failed: 'open' });
  });
});

describe('the frozen result', () => {
  it('is deeply frozen even when the body returned a value that was only shallowly frozen', async () => {
    const shared = Object.freeze({ config: { retries: 3 } });
    const tool = defineTool({ name: 'cfg', input: z.object({}), execute: () => shared, toContent: () => 'config' });
    const { rt, call } = setup({ tools: [tool] });
    const got: ToolResult[] = [];
    rt.hooks.on('tools/result', 'look', (res) => void got.push(res));
    const r = expectOk(rt, await call('cfg').result, 'config');
    expect(isDeepFrozen(got[0])).toBe(true);
    expect(isDeepFrozen(r)).toBe(true);
    expect(Reflect.set(shared.config, 'retries', 99)).toBe(false);
  });

  it('is deeply frozen with its parts, its error and metadata a failure brought', async () => {
    const part = { type: 'resource' as const, uri: 'file:///a.png', mediaType: 'image/png', data: 'AAAA' };
    const tools = [
      defineTool({ name: 'shot', input: z.object({}), execute: () => toolOutput({ value: { w: 1 }, content: 'a picture', parts: [part] }) }),
      defineTool({
        name: 'fails',
        input: z.object({}),
        execute: () => {
          throw new ToolError(ErrorCode.TOOL_FAILED, 'no', { content: 'it failed', metadata: { why: { code: 7 } } });
        },
      }),
    ];
    const { rt, call } = setup({ tools });
    const got: ToolResult[] = [];
    rt.hooks.on('tools/result', 'look', (res) => void got.push(res));
    const shot = expectOk(rt, await call('shot').result, 'a picture');
    expect(shot.parts).toEqual([part]);
    const failed = expectError(rt, await call('fails').result, ErrorCode.TOOL_FAILED, 'it failed');
    const unknown = expectError(rt, await call('nope').result, ErrorCode.UNKNOWN_TOOL);
    expect(failed.metadata).toEqual({ why: { code: 7 } });
    expect(got).toEqual([shot, failed, unknown]);
    for (const r of got) expect(isDeepFrozen(r)).toBe(true);
    expect(Object.isFrozen(shot.parts![0])).toBe(true);
    expect(Object.isFrozen(failed.error)).toBe(true);
    expect(Object.isFrozen((failed.metadata.why as object))).toBe(true);
    expect(Object.isFrozen(unknown.error)).toBe(true);
  });
});
