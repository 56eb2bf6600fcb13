/**
 * What a failed call may still report (issue 10.4): a ToolError's content and metadata reach the
 * error result (a stopped command's partial output, say), and a tool's `toMetadata` puts facts of
 * a successful value (an exit code) into the result's metadata. Hostile shapes are dropped, not trusted.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ErrorCode } from '../../../src/protocol/index.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { ToolError } from '../../../src/runtime/toolError.js';
import { expectError, expectOk, loggedResult, manualTool, setup } from './harness.js';

describe('error results with details', () => {
  it('a ToolError with content and metadata gives an error result with that content and metadata', async () => {
    const partial = defineTool({
      name: 'partial',
      input: z.object({}),
      execute: () => {
        throw new ToolError(ErrorCode.TIMEOUT, 'too slow', { content: 'TIMEOUT: too slow\nhalf the output\n[partial]', metadata: { partial: true, exitCode: null } });
      },
    });
    const { rt, call } = setup({ tools: [partial] });
    const r = await call('partial').result;
    expectError(rt, r, ErrorCode.TIMEOUT);
    expect(r.error?.message).toBe('too slow');
    expect(r.content).toBe('TIMEOUT: too slow\nhalf the output\n[partial]');
    expect(r.metadata).toMatchObject({ partial: true, exitCode: null });
    expect(loggedResult(rt, r).content).toBe(r.content);
  });

  it('a cancelled body that fails with details keeps them on its ABORTED result', async () => {
    const { tool, runs } = manualTool('slow');
    const { rt, call } = setup({ tools: [tool] });
    const h = call('slow');
    await new Promise((r) => setTimeout(r, 0));
    h.cancel('stop');
    runs[0]!.reject(new ToolError(ErrorCode.ABORTED, 'cancelled: stop', { content: 'so far\n[partial]', metadata: { partial: true } }));
    const r = await h.result;
    expectError(rt, r, ErrorCode.ABORTED);
    expect(r.content).toBe('so far\n[partial]');
    expect(r.metadata).toMatchObject({ partial: true });
  });

  for (const metadata of [['a'], 'ab', null]) {
    it(`a wrapper returning a failure with non-string content and metadata ${JSON.stringify(metadata)} gets the default content, no metadata`, async () => {
      const { tool } = manualTool('slow');
      const { rt, call } = setup({ tools: [tool] });
      rt.hooks.on('tools/execute', 'hostile', async () => ({ ok: false, error: { name: 'x', code: ErrorCode.TOOL_FAILED, message: 'no' }, content: 42, metadata }) as never);
      const r = await call('slow').result;
      expectError(rt, r, ErrorCode.TOOL_FAILED);
      expect(r.content).toBe('TOOL_FAILED: no');
      expect(Object.keys(r.metadata).filter((k) => k !== 'durationsMs')).toEqual([]);
    });
  }
});

describe('toMetadata', () => {
  const tool = (toMetadata: (v: { code: number }) => Record<string, unknown>) =>
    defineTool({ name: 'run', input: z.object({ code: z.number() }), execute: ({ code }) => ({ code }), toContent: (v) => `code ${v.code}`, toMetadata });

  it("puts a successful value's facts into the result's metadata", async () => {
    const { rt, call } = setup({ tools: [tool((v) => ({ exitCode: v.code }))] });
    const r = expectOk(rt, await call('run', { code: 3 }).result, 'code 3');
    expect(r.metadata).toMatchObject({ exitCode: 3 });
  });

  it('a toMetadata that throws or returns a non-object fails the call as TOOL_FAILED', async () => {
    const a = setup({ tools: [tool(() => { throw new Error('boom'); })] });
    expectError(a.rt, await a.call('run', { code: 1 }).result, ErrorCode.TOOL_FAILED, 'toMetadata of "run" failed');
    const b = setup({ tools: [tool(() => 'nope' as never)] });
    expectError(b.rt, await b.call('run', { code: 1 }).result, ErrorCode.TOOL_FAILED, 'not an object');
  });
});
