import type { LanguageModelV3CallOptions, LanguageModelV3Prompt, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { contextOverflowError, rateLimitError } from '../../src/adapters/model/modelErrors.js';
import { scriptedModel } from '../../src/adapters/model/scriptedModel.js';
import { flushMicrotasks, ManualClock } from '../../src/runtime/clock.js';

const prompt = (text: string): LanguageModelV3Prompt => [{ role: 'user', content: [{ type: 'text', text }] }];
const request = (text = 'hi', extra: Partial<LanguageModelV3CallOptions> = {}): LanguageModelV3CallOptions => ({ prompt: prompt(text), ...extra });
const usage = { inputTokens: 10, outputTokens: 5 };
const usageV3 = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

async function drain(stream: ReadableStream<LanguageModelV3StreamPart>): Promise<LanguageModelV3StreamPart[]> {
  const parts: LanguageModelV3StreamPart[] = [];
  for await (const part of stream as unknown as AsyncIterable<LanguageModelV3StreamPart>) parts.push(part);
  return parts;
}

describe('scriptedModel', () => {
  it('is a LanguageModelV3 named dsh/scripted', () => {
    const model = scriptedModel([]);
    expect(model).toMatchObject({ specificationVersion: 'v3', provider: 'dsh', modelId: 'scripted', supportedUrls: {} });
  });

  it('streams exactly the scripted text deltas, tool calls (generated ids, JSON input) and finish', async () => {
    const model = scriptedModel([
      { text: ['Let me ', 'read.'], toolCalls: [{ toolName: 'read', input: { path: 'a' } }, { toolName: 'read', input: { path: 'b' } }], usage },
      { text: 'done', usage },
    ]);
    const first = await drain((await model.doStream(request())).stream);
    expect(first).toEqual([
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Let me ' },
      { type: 'text-delta', id: 'text-1', delta: 'read.' },
      { type: 'text-end', id: 'text-1' },
      { type: 'tool-call', toolCallId: 'call-1-0', toolName: 'read', input: '{"path":"a"}' },
      { type: 'tool-call', toolCallId: 'call-1-1', toolName: 'read', input: '{"path":"b"}' },
      { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool-calls' }, usage: usageV3 },
    ]);
    const second = await drain((await model.doStream(request('next'))).stream);
    expect(second).toEqual([
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 'text-2' },
      { type: 'text-delta', id: 'text-2', delta: 'done' },
      { type: 'text-end', id: 'text-2' },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usageV3 },
    ]);
  });

  it('streams reasoning first, tool input deltas when asked, raw input strings verbatim, and the scripted finish reason', async () => {
    const model = scriptedModel([
      { reasoning: 'hmm', toolCalls: [{ toolName: 'write', toolCallId: 'w', input: '{"path":"x","content":"cut of', streamInput: true }], finishReason: 'length', usage },
    ]);
    expect(await drain((await model.doStream(request())).stream)).toEqual([
      { type: 'stream-start', warnings: [] },
      { type: 'reasoning-start', id: 'reasoning-1' },
      { type: 'reasoning-delta', id: 'reasoning-1', delta: 'hmm' },
      { type: 'reasoning-end', id: 'reasoning-1' },
      { type: 'tool-input-start', id: 'w', toolName: 'write' },
      { type: 'tool-input-delta', id: 'w', delta: '{"path":"x","content":"cut of' },
      { type: 'tool-input-end', id: 'w' },
      { type: 'tool-call', toolCallId: 'w', toolName: 'write', input: '{"path":"x","content":"cut of' },
      { type: 'finish', finishReason: { unified: 'length', raw: 'length' }, usage: usageV3 },
    ]);
  });

  it('sends raw parts verbatim', async () => {
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'tool-call', toolCallId: 'x', toolName: 'read', input: '{}' },
      { type: 'text-delta', id: 't', delta: 'after the call' },
      { type: 'finish', finishReason: { unified: 'other', raw: 'weird' }, usage: usageV3 },
    ];
    expect(await drain((await scriptedModel([{ parts }]).doStream(request())).stream)).toEqual(parts);
  });

  it('records every request; a step function sees the prompt it was sent', async () => {
    const seen: string[] = [];
    const model = scriptedModel([
      { text: 'one' },
      ({ prompt: p, index }) => {
        seen.push(`${index}:${JSON.stringify(p)}`);
        return { text: 'two' };
      },
    ]);
    await drain((await model.doStream(request('first'))).stream);
    expect(model.remaining).toBe(1);
    await drain((await model.doStream(request('second'))).stream);
    expect(seen).toEqual([`1:${JSON.stringify(prompt('second'))}`]);
    expect(model.calls.map((c) => [c.method, c.prompt])).toEqual([
      ['stream', prompt('first')],
      ['stream', prompt('second')],
    ]);
    expect(model.remaining).toBe(0);
  });

  it('fails at request time with the scripted error, then answers the next request', async () => {
    const error = rateLimitError(1);
    const model = scriptedModel([{ error }, { text: 'ok' }]);
    await expect(model.doStream(request())).rejects.toBe(error);
    const parts = await drain((await model.doStream(request())).stream);
    expect(parts.filter((p) => p.type === 'text-delta')).toEqual([{ type: 'text-delta', id: 'text-2', delta: 'ok' }]);
    expect(model.calls).toHaveLength(2);
  });

  it('a step function that throws fails the request', async () => {
    const model = scriptedModel([
      () => {
        throw contextOverflowError();
      },
    ]);
    await expect(model.doStream(request())).rejects.toMatchObject({ statusCode: 400 });
  });

  it('fails mid-stream: the parts before the failure arrive, then read() rejects', async () => {
    const error = new Error('connection reset');
    const model = scriptedModel([{ text: ['a', 'b', 'c'], streamError: { error, afterParts: 3 } }]);
    const reader = (await model.doStream(request())).stream.getReader();
    const got: LanguageModelV3StreamPart[] = [];
    await expect(
      (async () => {
        for (;;) {
          const r = await reader.read();
          if (r.done) return;
          got.push(r.value);
        }
      })(),
    ).rejects.toBe(error);
    expect(got).toEqual([
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'a' },
    ]);
  });

  it('fails mid-stream as an error part followed by an error finish', async () => {
    const error = { message: 'overloaded' };
    const parts = await drain((await scriptedModel([{ text: 'partial', streamError: { error, as: 'part' }, usage }]).doStream(request())).stream);
    expect(parts.slice(-3)).toEqual([
      { type: 'text-end', id: 'text-1' },
      { type: 'error', error },
      { type: 'finish', finishReason: { unified: 'error', raw: 'error' }, usage: usageV3 },
    ]);
  });

  it('says clearly when the script has run out', async () => {
    const model = scriptedModel([{ text: 'only' }]);
    await drain((await model.doStream(request())).stream);
    await expect(model.doStream(request())).rejects.toThrow('scriptedModel: request #2 received, but only 1 response(s) were scripted');
    await expect(model.doGenerate(request())).rejects.toThrow('request #3');
  });

  it('spaces the parts by the chunk delay on the injected clock', async () => {
    const clock = new ManualClock();
    const model = scriptedModel([{ text: ['x', 'y'] }], { clock, chunkDelayMs: 100 });
    const reader = (await model.doStream(request())).stream.getReader();
    let first: LanguageModelV3StreamPart | undefined;
    void reader.read().then((r) => (first = r.value));
    await flushMicrotasks();
    expect(first).toBeUndefined();
    await clock.advance(99);
    expect(first).toBeUndefined();
    await clock.advance(1);
    expect(first).toEqual({ type: 'stream-start', warnings: [] });

    // The rest arrive one delay apart: six more parts take exactly 600 ms of clock time.
    const rest: LanguageModelV3StreamPart[] = [];
    const reading = (async () => {
      for (;;) {
        const r = await reader.read();
        if (r.done) return;
        rest.push(r.value);
      }
    })();
    await clock.advance(500);
    expect(rest).toHaveLength(5);
    await clock.advance(100);
    await reading;
    expect(rest.map((p) => p.type)).toEqual(['text-start', 'text-delta', 'text-delta', 'text-end', 'finish']);
    expect(clock.now()).toBe(700);
  });

  it('a per-part delay function and a per-step override are honoured', async () => {
    const clock = new ManualClock();
    const model = scriptedModel([{ text: 'x', chunkDelayMs: (part) => (part.type === 'finish' ? 50 : 0) }], { clock, chunkDelayMs: 1_000 });
    const parts: LanguageModelV3StreamPart[] = [];
    const reading = drain((await model.doStream(request())).stream).then((p) => parts.push(...p));
    await flushMicrotasks();
    expect(parts).toEqual([]);
    expect(clock.pending).toBe(1);
    await clock.advance(50);
    await reading;
    expect(parts.at(-1)?.type).toBe('finish');
  });

  it('with no delay sets no timer at all', async () => {
    const clock = new ManualClock();
    const model = scriptedModel([{ text: ['a', 'b'], toolCalls: [{ toolName: 't' }] }], { clock });
    // The clock is never advanced: a timer would leave the drain hanging.
    const parts = await drain((await model.doStream(request())).stream);
    expect(parts.map((p) => p.type)).toEqual(['stream-start', 'text-start', 'text-delta', 'text-delta', 'text-end', 'tool-call', 'finish']);
    expect(clock.pending).toBe(0);
  });

  it('honours the abort signal: before the request, and during a chunk delay', async () => {
    const already = AbortSignal.abort(new DOMException('gone', 'AbortError'));
    const model = scriptedModel([{ text: 'a' }, { text: 'b' }], { clock: new ManualClock(), chunkDelayMs: 10 });
    await expect(model.doStream(request('x', { abortSignal: already }))).rejects.toMatchObject({ name: 'AbortError' });
    expect(model.calls).toHaveLength(0);

    const controller = new AbortController();
    const clock = new ManualClock();
    const slow = scriptedModel([{ text: 'a' }], { clock, chunkDelayMs: 10 });
    const reader = (await slow.doStream(request('x', { abortSignal: controller.signal }))).stream.getReader();
    const read = reader.read();
    await flushMicrotasks();
    expect(clock.pending).toBe(1);
    const reason = new DOMException('user cancelled', 'AbortError');
    controller.abort(reason);
    await expect(read).rejects.toBe(reason);
    expect(clock.pending).toBe(0);
  });

  it('an abort between the request and the first read errors the stream (no delay configured)', async () => {
    const controller = new AbortController();
    const model = scriptedModel([{ text: 'a' }]);
    const { stream } = await model.doStream(request('x', { abortSignal: controller.signal }));
    controller.abort(new DOMException('stop', 'AbortError'));
    await expect(stream.getReader().read()).rejects.toMatchObject({ name: 'AbortError', message: 'stop' });
  });

  it('cancelling the reader clears the pending delay', async () => {
    const clock = new ManualClock();
    const reader = (await scriptedModel([{ text: 'a' }], { clock, chunkDelayMs: 10 }).doStream(request())).stream.getReader();
    void reader.read().catch(() => undefined);
    await flushMicrotasks();
    expect(clock.pending).toBe(1);
    await reader.cancel();
    expect(clock.pending).toBe(0);
  });

  it('doGenerate returns the same response as one result, and throws scripted errors', async () => {
    const model = scriptedModel([
      { reasoning: 'r', text: ['a', 'b'], toolCalls: [{ toolName: 'read', input: { path: 'a' } }], usage },
      { error: rateLimitError() },
      { text: 'x', streamError: { error: new Error('cut') } },
    ]);
    expect(await model.doGenerate(request())).toEqual({
      content: [
        { type: 'reasoning', text: 'r' },
        { type: 'text', text: 'ab' },
        { type: 'tool-call', toolCallId: 'call-1-0', toolName: 'read', input: '{"path":"a"}' },
      ],
      finishReason: { unified: 'tool-calls', raw: 'tool-calls' },
      usage: usageV3,
      warnings: [],
    });
    await expect(model.doGenerate(request())).rejects.toMatchObject({ statusCode: 429 });
    await expect(model.doGenerate(request())).rejects.toThrow('cut');
    expect(model.calls.map((c) => c.method)).toEqual(['generate', 'generate', 'generate']);
  });
});
