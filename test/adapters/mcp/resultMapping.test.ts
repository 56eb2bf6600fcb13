// How MCP results become dsh results, part by part, and how typed parts travel the pipeline
// (post-execute rewrites, spill, the prompt projection).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mapCallToolResult } from '../../../src/adapters/mcp/resultMapping.js';
import { projectPrompt } from '../../../src/runtime/projection/prompt.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { ToolError } from '../../../src/runtime/toolError.js';
import { toolOutput } from '../../../src/runtime/pipeline/draft.js';

const where = { server: 's', tool: 't' };

describe('mapCallToolResult', () => {
  it('keeps audio, blobs and links as typed parts; unknown blocks become a note; no text shows the structured value', () => {
    const out = mapCallToolResult(
      {
        content: [
          { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
          { type: 'resource', resource: { uri: 'mem://b', mimeType: 'application/pdf', blob: 'JVBERi0=' } },
          { type: 'resource_link', uri: 'https://example.com/x', name: 'x' },
          { type: 'hologram' } as never,
        ],
        structuredContent: { n: 1 },
      },
      where,
    );
    expect(out.value).toEqual({ n: 1 });
    expect(out.content).toBe('[content of unsupported type "hologram" left out]');
    expect(out.parts).toEqual([
      { type: 'audio', data: 'AAAA', mediaType: 'audio/wav' },
      { type: 'resource', uri: 'mem://b', mediaType: 'application/pdf', data: 'JVBERi0=' },
      { type: 'resource', uri: 'https://example.com/x' },
    ]);
    expect(mapCallToolResult({ content: [], structuredContent: { n: 2 } }, where).content).toBe('{"n":2}');
  });

  it('leaves out parts beyond the size limit with a note, and isError throws TOOL_FAILED with the text as content', () => {
    const out = mapCallToolResult({ content: [{ type: 'image', data: 'x'.repeat(100), mimeType: 'image/png' }] }, where, { maxPartChars: 10 });
    expect(out.parts).toBeUndefined();
    expect(out.content).toMatch(/an image \(image\/png\) of 100 characters left out/);
    let thrown: unknown;
    try {
      mapCallToolResult({ isError: true, content: [] }, where);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ToolError);
    expect((thrown as ToolError).code).toBe('TOOL_FAILED');
    expect((thrown as ToolError).details?.content).toBe('the MCP tool "t" reported an error without text');
  });
});

describe('typed parts in the pipeline', () => {
  const pic = defineTool({
    name: 'pic',
    input: z.object({ big: z.boolean().default(false) }),
    execute: ({ big }) => toolOutput({ value: { ok: true }, content: big ? 'x'.repeat(40_000) : 'a picture', parts: [{ type: 'image', data: 'iVBOR', mediaType: 'image/png' }] }),
  });

  it('reach the result and the prompt as LanguageModelV3 content; a listener replacing the value drops them', async () => {
    const rt = createRuntime({ tools: [pic] });
    const r = await rt.runCall({ callId: 'c1', toolName: 'pic', input: {} }).result;
    expect(r).toMatchObject({ content: 'a picture', value: { ok: true }, parts: [{ type: 'image', data: 'iVBOR', mediaType: 'image/png' }] });
    rt.hooks.on('tools/post-execute', 'replace', () => ({ kind: 'accept', value: 'plain' }));
    const replaced = await rt.runCall({ callId: 'c2', toolName: 'pic', input: {} }).result;
    expect(replaced.parts).toBeUndefined();
    expect(replaced.content).toBe('plain');
  });

  it('survive a spill (the text is spilled, the parts stay) and are projected after the preview', async () => {
    const rt = createRuntime({ tools: [pic], maxInlineBytes: 1024 });
    const r = await rt.runCall({ callId: 'c1', toolName: 'pic', input: { big: true }, }, { turnId: 'turn-1', stepIndex: 0 }).result;
    expect(r.metadata.spill).toBeDefined();
    expect(r.value).toBeUndefined();
    expect(r.parts).toEqual([{ type: 'image', data: 'iVBOR', mediaType: 'image/png' }]);
  });

  it('the projection sends content output for results with parts and plain text otherwise', () => {
    const base = { time: 0, turnId: 't1', stepIndex: 0 } as const;
    const prompt = projectPrompt([
      { ...base, seq: 1, type: 'turn/start', input: 'go' },
      { ...base, seq: 2, type: 'step/start' },
      { ...base, seq: 3, type: 'tool/call', callId: 'a', toolName: 'pic', input: '{}', index: 0, executionMode: 'exclusive' },
      {
        ...base,
        seq: 4,
        type: 'tool/result',
        callId: 'a',
        toolName: 'pic',
        sourceEventSeqs: [3],
        result: { callId: 'a', toolName: 'pic', isError: false, content: 'see', parts: [{ type: 'resource', uri: 'u://1' }, { type: 'audio', data: 'AA', mediaType: 'audio/wav' }], metadata: {} },
      },
    ] as never);
    const tool = prompt.find((m) => m.role === 'tool');
    expect(tool?.role === 'tool' && tool.content[0]?.type === 'tool-result' && tool.content[0].output).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'see' },
        { type: 'text', text: 'resource link: u://1' },
        { type: 'file-data', data: 'AA', mediaType: 'audio/wav' },
      ],
    });
  });
});
