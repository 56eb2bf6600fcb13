/**
 * The model port is the AI SDK's own `LanguageModelV3`: an off-the-shelf AI SDK model plugs into
 * the same code as `scriptedModel`, and the AI SDK itself can drive `scriptedModel`.
 */
import type { LanguageModelV3, LanguageModelV3Prompt, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel, type ScriptedModel } from '../../src/adapters/model/scriptedModel.js';
import { projectPrompt } from '../../src/runtime/projection/prompt.js';
import { newLog, twoStepTurn } from './fixtures.js';

/** What a step does with any model: send the projected prompt, read the text and tool calls back. */
async function requestOnce(model: LanguageModelV3, prompt: LanguageModelV3Prompt) {
  const { stream } = await model.doStream({ prompt });
  const out = { text: '', toolCalls: [] as string[], finish: '' };
  for await (const part of stream as unknown as AsyncIterable<LanguageModelV3StreamPart>) {
    if (part.type === 'text-delta') out.text += part.delta;
    if (part.type === 'tool-call') out.toolCalls.push(`${part.toolName}(${part.input})`);
    if (part.type === 'finish') out.finish = part.finishReason.unified;
  }
  return out;
}

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: undefined } };

describe('AI SDK compatibility', () => {
  it('MockLanguageModelV3 and scriptedModel are the same LanguageModelV3 type and run through the same code', async () => {
    expectTypeOf<MockLanguageModelV3>().toExtend<LanguageModelV3>();
    expectTypeOf<ScriptedModel>().toExtend<LanguageModelV3>();

    const log = newLog();
    twoStepTurn(log);
    const prompt = projectPrompt(log.events(), { system: 'sys' });

    const mock = new MockLanguageModelV3({
      doStream: {
        stream: convertArrayToReadableStream<LanguageModelV3StreamPart>([
          { type: 'text-start', id: '1' },
          { type: 'text-delta', id: '1', delta: 'from the mock' },
          { type: 'text-end', id: '1' },
          { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
        ]),
      },
    });
    const scripted = scriptedModel([{ text: 'from the script', toolCalls: [{ toolName: 'read', input: { path: 'e' } }] }]);

    const models: LanguageModelV3[] = [mock, scripted];
    const results = [];
    for (const model of models) results.push(await requestOnce(model, prompt));
    expect(results).toEqual([
      { text: 'from the mock', toolCalls: [], finish: 'stop' },
      { text: 'from the script', toolCalls: ['read({"path":"e"})'], finish: 'tool-calls' },
    ]);
    // Both received exactly the projection of the log.
    expect(mock.doStreamCalls[0]?.prompt).toEqual(prompt);
    expect(scripted.calls[0]?.prompt).toEqual(prompt);
  });

  it('the AI SDK drives scriptedModel through a tool loop (generateText)', async () => {
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'read', input: { path: 'a.txt' } }, { toolName: 'read', input: { path: 'b.txt' } }] },
      ({ prompt }) => {
        // The AI SDK's own projection of the first step reached the model.
        const results = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
        return { text: `got ${results.length} results` };
      },
    ]);
    const result = await generateText({
      model,
      prompt: 'read a and b',
      tools: { read: tool({ inputSchema: z.object({ path: z.string() }), execute: async ({ path }) => `contents of ${path}` }) },
      stopWhen: stepCountIs(5),
    });
    expect(result.text).toBe('got 2 results');
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]?.toolResults.map((r) => r.output)).toEqual(['contents of a.txt', 'contents of b.txt']);
  });

  it('the AI SDK streams scriptedModel text (streamText)', async () => {
    const result = streamText({ model: scriptedModel([{ text: ['Hello', ', ', 'world'] }]), prompt: 'hi' });
    expect(await result.text).toBe('Hello, world');
    expect(await result.finishReason).toBe('stop');
  });
});
