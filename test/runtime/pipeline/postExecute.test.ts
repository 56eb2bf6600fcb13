/**
 * Stage 5: `tools/post-execute` rewrites (SPEC §2.5, §8.5); `finalize.test.ts` has stage 6.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ErrorCode, type ToolResult } from '../../../src/protocol/index.js';
import { sleep } from '../../../src/runtime/clock.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { toolOutput } from '../../../src/runtime/pipeline/draft.js';
import { abortableBody, echoTool, expectError, expectOk, isDeepFrozen, isSettled, only, setup, typesOf } from './harness.js';

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

describe('post-execute decisions', () => {
  it('accept alone keeps the result', async () => {
    const { rt, call } = setup({ tools: [listTool()] });
    rt.hooks.on('tools/post-execute', 'ok', () => ({ kind: 'accept' }));
    const r = expectOk(rt, await call('list').result, 'a.ts\nb.ts');
    expect(r.value).toEqual({ files: ['a.ts', 'b.ts'] });
  });

  it('accept + content replaces only the display content; value and metadata are kept', async () => {
    const { rt, call } = setup({ tools: [listTool()] });
    rt.hooks.on('tools/post-execute', 'tag', () => ({ kind: 'accept', metadata: { source: 'fs' } }));
    rt.hooks.on('tools/post-execute', 'summarise', () => ({ kind: 'accept', content: '2 files' }));
    const r = expectOk(rt, await call('list').result, '2 files');
    expect(r.value).toEqual({ files: ['a.ts', 'b.ts'] });
    expect(r.metadata).toEqual({ source: 'fs' });
  });

  it('accept + value replaces the canonical value; it is re-validated and the content recomputed with toContent', async () => {
    const { rt, call } = setup({ tools: [listTool()] });
    rt.hooks.on('tools/post-execute', 'hide-secrets', (d) => ({
      kind: 'accept',
      value: { files: (d.value as { files: string[] }).files.filter((f) => f !== 'b.ts').concat('c.ts') },
    }));
    const r = expectOk(rt, await call('list').result, 'a.ts\nc.ts');
    expect(r.value).toEqual({ files: ['a.ts', 'c.ts'] });
  });

  it('a replaced value failing the output schema gives INVALID_OUTPUT naming the listener', async () => {
    const { rt, call } = setup({ tools: [listTool()] });
    rt.hooks.on('tools/post-execute', 'bad-rewrite', () => ({ kind: 'accept', value: { files: 'a.ts' } }));
    const r = await call('list').result;
    expectError(rt, r, ErrorCode.INVALID_OUTPUT, 'bad-rewrite');
    expect(r.error?.name).toBe('InvalidOutputError');
    expect(r.content).not.toContain('a.ts\nb.ts');
  });

  it("the body's own value is validated against the output schema too", async () => {
    const { rt, call } = setup({ tools: [listTool({ files: { files: [1, 2] } })] });
    let postCalled = false;
    rt.hooks.on('tools/post-execute', 'spy', () => void (postCalled = true));
    expectError(rt, await call('list').result, ErrorCode.INVALID_OUTPUT, /output schema/);
    expect(postCalled).toBe(false);
  });

  it('block + feedback gives POST_EXECUTE_BLOCKED with the feedback as the content', async () => {
    const { rt, call } = setup({ tools: [listTool()] });
    rt.hooks.on('tools/post-execute', 'dlp', () => ({ kind: 'block', feedback: 'the listing contains secrets; narrow the query' }));
    const r = await call('list').result;
    expectError(rt, r, ErrorCode.POST_EXECUTE_BLOCKED);
    expect(r.content).toBe('the listing contains secrets; narrow the query');
    expect(r.error?.message).toContain('dlp');
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'tool/result']);
  });

  it('listeners run in order, each seeing the previous rewrite; a block stops the chain', async () => {
    const { rt, call } = setup({ tools: [listTool()] });
    const seen: string[] = [];
    rt.hooks.on('tools/post-execute', 'upper', (d) => (seen.push(d.content), { kind: 'accept', content: d.content.toUpperCase() }));
    rt.hooks.on('tools/post-execute', 'prefix', (d) => (seen.push(d.content), { kind: 'accept', content: `files:\n${d.content}` }));
    rt.hooks.on('tools/post-execute', 'async-look', async (d) => void seen.push(d.content));
    expectOk(rt, await call('list').result, 'files:\nA.TS\nB.TS');
    expect(seen).toEqual(['a.ts\nb.ts', 'A.TS\nB.TS', 'files:\nA.TS\nB.TS']);

    rt.hooks.on('tools/post-execute', 'stop', () => ({ kind: 'block', feedback: 'stopped' }));
    let after = false;
    rt.hooks.on('tools/post-execute', 'after-stop', () => void (after = true));
    expectError(rt, await call('list').result, ErrorCode.POST_EXECUTE_BLOCKED, 'stopped');
    expect(after).toBe(false);
  });

  it('a throwing listener fails closed: HOOK_FAILED naming it, and the content it inspected does not reach the model', async () => {
    const secretTool = defineTool({ name: 'env', input: z.object({}), execute: () => 'API_KEY=sk-live-123' });
    const { rt, call } = setup({ tools: [secretTool] });
    rt.hooks.on('tools/post-execute', 'redact', () => {
      throw new Error('redaction rules failed to load');
    });
    const r = await call('env').result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'redact');
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'tools/post-execute', listener: 'redact', failed: 'closed' });
    expect(typesOf(rt, r.callId)).toEqual(['tool/call', 'hook/failed', 'tool/result']);
    expect(JSON.stringify(only(rt, r.callId, 'tool/result'))).not.toContain('sk-live-123');
  });

  it('a later listener throwing after an earlier rewrite: neither version reaches the model', async () => {
    const secretTool = defineTool({ name: 'env', input: z.object({}), execute: () => 'API_KEY=sk-live-123' });
    const { rt, call } = setup({ tools: [secretTool] });
    rt.hooks.on('tools/post-execute', 'mask', () => ({ kind: 'accept', content: 'API_KEY=sk-****' }));
    rt.hooks.on('tools/post-execute', 'audit', async () => {
      throw new Error('audit sink down');
    });
    const r = await call('env').result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'audit');
    expect(JSON.stringify(only(rt, r.callId, 'tool/result'))).not.toMatch(/sk-/);
  });

  it('a listener mutating the draft in place fails closed instead of bypassing validation', async () => {
    const { rt, call } = setup({ tools: [listTool()] });
    rt.hooks.on('tools/post-execute', 'sneaky', (d) => {
      (d.value as { files: unknown[] }).files.push(42);
      (d.metadata as Record<string, unknown>).x = 1;
    });
    const r = await call('list').result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'sneaky');
  });

  it('a listener that never settles is bounded by limits.hookTimeoutMs', async () => {
    const { rt, clock, call } = setup({ tools: [listTool()], limits: { hookTimeoutMs: 2_000 } });
    rt.hooks.on('tools/post-execute', 'stuck', () => new Promise<never>(() => {}));
    const h = call('list');
    await clock.advance(1_999);
    expect(await isSettled(h.result)).toBe(false);
    expect(h.actor.getSnapshot().value).toEqual('postExecuteWaiting');
    await clock.advance(1);
    const r = await h.result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'stuck');
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'tools/post-execute', listener: 'stuck', failed: 'closed' });
    expect(r.content).not.toContain('a.ts');
  });

  it('a listener answering with a bare thenable is waited for like a promise', async () => {
    const { rt, call } = setup({ tools: [listTool()] });
    const thenable = { then: (res: (d: unknown) => void) => res({ kind: 'accept', content: 'from a thenable' }) };
    rt.hooks.on('tools/post-execute', 'legacy-promise', () => thenable as never);
    rt.hooks.on('tools/pre-execute', 'legacy-pre', () => ({ then: (res: (d: unknown) => void) => res({ kind: 'allow' }) }) as never);
    expectOk(rt, await call('list').result, 'from a thenable');
  });

  it('a listener returning nonsense fails closed, without echoing what it returned', async () => {
    const secretTool = defineTool({ name: 'env', input: z.object({}), execute: () => 'API_KEY=sk-live-123' });
    const { rt, call } = setup({ tools: [secretTool] });
    rt.hooks.on('tools/post-execute', 'typo', (d) => ({ kind: 'replace', content: d.content }) as never);
    const r = await call('env').result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'typo');
    expect(JSON.stringify(rt.log.events())).not.toContain('sk-live-123');
  });
});


describe("a body's own parts through post-execute", () => {
  it('an accept that adds metadata keeps the parts; one that replaces the value drops them (they came with the old value)', async () => {
    const part = { type: 'image' as const, data: 'AAAA', mediaType: 'image/png' };
    const shot = defineTool({ name: 'shot', input: z.object({ replace: z.boolean() }), execute: () => toolOutput({ value: 'png', content: 'a picture', parts: [part] }) });
    const { rt, call } = setup({ tools: [shot] });
    rt.hooks.on('tools/post-execute', 'review', (_d, c) => ((c.args as { replace: boolean }).replace ? { kind: 'accept', value: 'redacted' } : { kind: 'accept', metadata: { reviewed: true } }));
    const kept = expectOk(rt, await call('shot', { replace: false }).result, 'a picture');
    expect(kept.parts).toEqual([part]);
    expect(kept.metadata).toMatchObject({ reviewed: true });
    const replaced = expectOk(rt, await call('shot', { replace: true }).result, 'redacted');
    expect(replaced).not.toHaveProperty('parts');
  });
});

describe('post-execute listeners that do not apply', () => {
  // Stage timings record each stage the call entered (durationsMs), sync stages included.
  const stagesOf = (r: ToolResult) => Object.keys(r.metadata.durationsMs as object);

  it('a listener whose appliesTo is false is skipped; when none applies the call never enters postExecute', async () => {
    const { rt, call } = setup({ tools: [listTool()], spillStore: false, stageTimings: true });
    rt.hooks.on('tools/post-execute', 'big-only', () => ({ kind: 'accept', content: 'rewritten' }), {
      appliesTo: (draft) => draft.content.length > 1000,
    });
    const r = expectOk(rt, await call('list').result, 'a.ts\nb.ts');
    expect(stagesOf(r)).not.toContain('postExecute');
    expect(stagesOf(r)).toContain('executing');
  });

  it("the machine asks a listener's appliesTo once per result (its two guards share the answer); the stage itself asks again when it runs", async () => {
    for (const applies of [false, true]) {
      const { rt, call } = setup({ tools: [listTool()], spillStore: false });
      let asked = 0;
      rt.hooks.on('tools/post-execute', 'counted', () => ({ kind: 'accept', content: 'rewritten' }), {
        appliesTo: () => {
          asked++;
          return applies;
        },
      });
      expectOk(rt, await call('list').result, applies ? 'rewritten' : 'a.ts\nb.ts');
      expect(asked, `appliesTo answering ${applies}`).toBe(applies ? 2 : 1);
    }
  });

  it('a body that failed has no draft: no appliesTo is asked and the stage is skipped; the error result is the body\'s own (SPEC §2.5)', async () => {
    const broken = defineTool({
      name: 'broken',
      input: z.object({}),
      execute: () => {
        throw new Error('disk on fire');
      },
    });
    const { rt, call } = setup({ tools: [broken], spillStore: false, stageTimings: true });
    const asked: unknown[] = [];
    rt.hooks.on('tools/post-execute', 'counted', () => ({ kind: 'accept', content: 'rewritten' }), {
      appliesTo: (draft) => {
        asked.push(draft);
        return true;
      },
    });
    const r = expectError(rt, await call('broken').result, ErrorCode.TOOL_FAILED);
    expect(r.content).toContain('disk on fire');
    expect(asked).toEqual([]);
    expect(Object.keys(r.metadata.durationsMs as object)).not.toContain('postExecute');
  });

  it('a body that returns after its call was cancelled: the call ends ABORTED and no appliesTo is asked about that value', async () => {
    // Returns a value (not an error) when it hears the abort.
    const { tool: stubborn, started } = abortableBody('stubborn', 'resolve');
    const { rt, call } = setup({ tools: [stubborn], spillStore: false });
    const asked: unknown[] = [];
    rt.hooks.on('tools/post-execute', 'counted', () => ({ kind: 'accept', content: 'rewritten' }), {
      appliesTo: (draft) => {
        asked.push(draft);
        return true;
      },
    });
    const handle = call('stubborn');
    await started;
    handle.cancel();
    const r = expectError(rt, await handle.result, ErrorCode.ABORTED);
    expect(r.content).not.toContain('rewritten');
    expect(asked).toEqual([]);
  });

  it('the default spill listener applies only to results that may be over maxInlineBytes', async () => {
    const small = setup({ tools: [listTool({ files: { files: ['x'.repeat(10)] } })], maxInlineBytes: 100, stageTimings: true });
    expect(stagesOf(await small.call('list').result)).not.toContain('postExecute');
    // 50 chars may be up to 150 UTF-8 bytes: the spill listener applies, so the stage runs (and keeps it inline)
    const maybe = setup({ tools: [listTool({ files: { files: ['x'.repeat(50)] } })], maxInlineBytes: 100, stageTimings: true });
    const r = expectOk(maybe.rt, await maybe.call('list').result, 'x'.repeat(50));
    expect(stagesOf(r)).toContain('postExecute');
  });
});

describe('each post-execute listener gets its own hookTimeoutMs (SPEC §8.15)', () => {
  it('two slow listeners, each within its own budget, pass although together they take longer', async () => {
    const { rt, clock, call } = setup({ tools: [listTool()], spillStore: false, limits: { hookTimeoutMs: 1_000 } });
    rt.hooks.on('tools/post-execute', 'first', async () => {
      await sleep(clock, 700);
      return { kind: 'accept', content: 'first' };
    });
    rt.hooks.on('tools/post-execute', 'second', async (draft) => {
      await sleep(clock, 700);
      return { kind: 'accept', content: `${draft.content}+second` };
    });
    const h = call('list');
    await clock.advance(1_400);
    expectOk(rt, await h.result, 'first+second');
  });

  it('a listener that hangs after a slow one is timed from its own start, and named; later listeners do not run', async () => {
    const { rt, clock, call } = setup({ tools: [listTool()], spillStore: false, limits: { hookTimeoutMs: 1_000 } });
    const ran: string[] = [];
    rt.hooks.on('tools/post-execute', 'slow', async () => {
      await sleep(clock, 700);
      return undefined;
    });
    let release!: () => void;
    rt.hooks.on('tools/post-execute', 'stuck', () => new Promise<undefined>((res) => (release = () => res(undefined))));
    rt.hooks.on('tools/post-execute', 'after', () => void ran.push('after'));
    const h = call('list');
    await clock.advance(1_699);
    expect(await isSettled(h.result)).toBe(false);
    await clock.advance(1);
    const r = await h.result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'stuck');
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'tools/post-execute', listener: 'stuck', message: 'no answer within 1000 ms' });
    release(); // a late answer changes nothing and starts no later listener
    await clock.advance(10);
    expect(ran).toEqual([]);
  });
});

describe('a throwing appliesTo fails closed, by name (issue 11.4)', () => {
  it('HOOK_FAILED naming the listener, with its hook/failed event; the content does not reach the model', async () => {
    const { rt, call } = setup({ tools: [listTool()], spillStore: false });
    rt.hooks.on('tools/post-execute', 'redact', () => ({ kind: 'accept', content: 'redacted' }), {
      appliesTo: () => {
        throw new Error('cannot tell');
      },
    });
    const r = await call('list').result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'redact');
    expect(r.content).not.toContain('a.ts');
    expect(only(rt, r.callId, 'hook/failed')).toMatchObject({ hook: 'tools/post-execute', listener: 'redact', failed: 'closed' });
    expect(only(rt, r.callId, 'hook/failed').message).toContain('cannot tell');
  });

  it('an appliesTo that throws once and then says "no" still fails the call closed', async () => {
    const { rt, call } = setup({ tools: [listTool()], spillStore: false });
    let asked = 0;
    rt.hooks.on('tools/post-execute', 'redact', () => ({ kind: 'accept', content: 'redacted' }), {
      appliesTo: () => {
        if (asked++ === 0) throw new Error('flaky');
        return false;
      },
    });
    const r = await call('list').result;
    expectError(rt, r, ErrorCode.HOOK_FAILED, 'redact');
    expect(r.content).not.toContain('a.ts');
  });
});
