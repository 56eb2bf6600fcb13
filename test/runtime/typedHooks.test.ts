/** Hooks typed by tool: a listener for `read` sees `{ path: string }` with no cast, and only read's calls. */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { forTool, forToolResult, guardFor, type DeepReadonly } from '../../src/runtime/typedHooks.js';
import { createBuiltinTools } from '../../src/adapters/tools/builtinTools.js';

const read = defineTool({
  name: 'read',
  input: z.object({ path: z.string(), lines: z.array(z.number()).optional() }),
  execute: ({ path }) => `contents of ${path}`,
});
const other = defineTool({ name: 'other', input: z.object({ path: z.number() }), execute: ({ path }) => String(path) });

let n = 0;
const run = (rt: ReturnType<typeof createRuntime>, toolName: string, input: unknown) => rt.runCall({ callId: `t${++n}`, toolName, input }).result;

describe('typed hooks', () => {
  it('forTool narrows call.args to the tool input type, deep-readonly (type-level; the assignment also throws at run time)', async () => {
    const rt = createRuntime({ tools: [read, other] });
    const seen: string[] = [];
    rt.hooks.on(
      'tools/pre-execute',
      'no-abs',
      forTool(read, (call, next) => {
        expectTypeOf(call.args).toEqualTypeOf<DeepReadonly<{ path: string; lines?: number[] | undefined }>>();
        expectTypeOf(call.args.path).toEqualTypeOf<string>();
        // @ts-expect-error the args are deep-frozen, so the type is read-only too
        call.args.path = 'x';
        seen.push(call.args.path);
        return call.args.path.startsWith('/') ? { kind: 'deny', reason: 'relative paths only' } : next();
      }),
    );
    const r = await run(rt, 'read', { path: '/etc/passwd' });
    expect(r.error?.code).toBe('HOOK_FAILED'); // the listener's assignment threw: frozen args fail closed
    expect(seen).toEqual([]);
  });

  it('a typed listener denies by its narrowed args; calls of another tool skip it', async () => {
    const rt = createRuntime({ tools: [read, other] });
    const seen: string[] = [];
    rt.hooks.on(
      'tools/pre-execute',
      'no-abs',
      forTool(read, (call, next) => {
        seen.push(call.args.path);
        return call.args.path.startsWith('/') ? { kind: 'deny', reason: 'relative paths only' } : next();
      }),
    );
    expect((await run(rt, 'read', { path: '/etc/passwd' })).error?.code).toBe('POLICY_DENIED');
    expect((await run(rt, 'read', { path: 'a.txt' })).isError).toBe(false);
    expect((await run(rt, 'other', { path: 7 })).isError).toBe(false);
    expect(seen).toEqual(['/etc/passwd', 'a.txt']);
  });

  it('forToolResult and guardFor are typed the same way', async () => {
    const rt = createRuntime({ tools: [read, other] });
    rt.hooks.on(
      'tools/post-execute',
      'tag',
      forToolResult(read, (draft, call) => {
        expectTypeOf(call.args.path).toEqualTypeOf<string>();
        return { kind: 'accept', content: `${draft.content} [${call.args.path.length}]` };
      }),
    );
    rt.tools.guard(
      guardFor(read, (call) => {
        expectTypeOf(call.args.lines).toEqualTypeOf<readonly number[] | undefined>();
        return call.args.path.includes('secret') ? 'no secrets' : undefined;
      }),
    );
    expect((await run(rt, 'read', { path: 'ab' })).content).toBe('contents of ab [2]');
    expect((await run(rt, 'read', { path: 'secret' })).error?.code).toBe('GUARD_DENIED');
    expect((await run(rt, 'other', { path: 1 })).content).toBe('1');
  });

  it('works with the built-in tools: read has an optional path', () => {
    const b = createBuiltinTools({ root: '/nonexistent' });
    forTool(b.read, (call, next) => {
      expectTypeOf(call.args.path).toEqualTypeOf<string | undefined>();
      expectTypeOf(call.args.locator).toEqualTypeOf<string | undefined>();
      return next();
    });
    forTool(b.bash, (call, next) => {
      expectTypeOf(call.args.command).toEqualTypeOf<string>();
      return next();
    });
  });
});
