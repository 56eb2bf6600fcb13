import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { createActor, createMachine } from 'xstate';
import { modelStreamLogic } from '../../machines/modelStream.js';

/**
 * A provider whose stream the test drives part by part; it keeps the request's abort signal.
 */
function manualModel() {
  let controller!: ReadableStreamDefaultController<LanguageModelV3StreamPart>;
  const seen: { signal?: AbortSignal } = {};
  const model = {
    specificationVersion: 'v3',
    provider: 'test',
    modelId: 'manual',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: async (options: LanguageModelV3CallOptions) => {
      seen.signal = options.abortSignal;
      return { stream: new ReadableStream<LanguageModelV3StreamPart>({ start: (c) => void (controller = c) }) };
    },
  } as unknown as LanguageModelV3;
  return { model, seen, push: (part: LanguageModelV3StreamPart) => controller.enqueue(part) };
}

/** A parent that invokes the model stream while `listening`, and records what it is sent. */
function listen(model: LanguageModelV3) {
  const events: string[] = [];
  const parent = createMachine({
    initial: 'listening',
    states: {
      listening: {
        invoke: { src: modelStreamLogic, input: { model, prompt: [], tools: [] } },
        on: { STOP: 'stopped', '*': { actions: ({ event }) => void events.push(event.type) } },
      },
      stopped: {},
    },
  });
  const actor = createActor(parent).start();
  return { actor, events };
}

const tick = () => new Promise<void>((r) => setTimeout(r, 0));
const finish: LanguageModelV3StreamPart = {
  type: 'finish',
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: undefined } },
};

describe('modelStream', () => {
  it('aborts the request when the step stops listening before the response finished', async () => {
    const m = manualModel();
    const { actor, events } = listen(m.model);
    await tick();
    m.push({ type: 'text-delta', id: 't', delta: 'half an ans' });
    await tick();
    actor.send({ type: 'STOP' });
    expect(events).toEqual(['MODEL.TEXT']);
    expect(m.seen.signal?.aborted).toBe(true);
    m.push({ type: 'text-delta', id: 't', delta: 'wer' });
    await tick();
    expect(events).toEqual(['MODEL.TEXT']); // nothing after the stop reaches the step
  });

  it('leaves a finished request alone: there is nothing left to abort', async () => {
    const m = manualModel();
    const { actor, events } = listen(m.model);
    await tick();
    m.push({ type: 'text-delta', id: 't', delta: 'done' });
    m.push(finish);
    await tick();
    actor.send({ type: 'STOP' });
    expect(events).toEqual(['MODEL.TEXT', 'MODEL.FINISH']);
    expect(m.seen.signal?.aborted).toBe(false);
  });

  it('aborts after an error part (a provider may keep the stream open after one)', async () => {
    const m = manualModel();
    const { actor, events } = listen(m.model);
    await tick();
    m.push({ type: 'error', error: new Error('overloaded') });
    await tick();
    actor.send({ type: 'STOP' });
    expect(events).toEqual(['MODEL.ERROR']);
    expect(m.seen.signal?.aborted).toBe(true);
  });
});
