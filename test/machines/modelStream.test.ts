import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart, SharedV3Warning } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { createActor, createMachine } from 'xstate';
import { MAX_HELD_CALLS, modelStreamLogic, type ModelStreamInput } from '../../machines/modelStream.js';

/**
 * A provider whose stream the test drives part by part; it keeps the request's abort signal.
 */
function manualModel() {
  let controller!: ReadableStreamDefaultController<LanguageModelV3StreamPart>;
  const seen: { signal?: AbortSignal } = {};
  let stream!: ReadableStream<LanguageModelV3StreamPart>;
  const model = {
    specificationVersion: 'v3',
    provider: 'test',
    modelId: 'manual',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: async (options: LanguageModelV3CallOptions) => {
      seen.signal = options.abortSignal;
      stream = new ReadableStream<LanguageModelV3StreamPart>({ start: (c) => void (controller = c) });
      return { stream };
    },
  } as unknown as LanguageModelV3;
  return { model, seen, push: (part: LanguageModelV3StreamPart) => controller.enqueue(part), close: () => controller.close(), stream: () => stream };
}

/** A parent that invokes the model stream while `listening`, and records what it is sent. */
function listen(model: LanguageModelV3, extra: Partial<ModelStreamInput> = {}) {
  const events: string[] = [];
  /** The call ids of each MODEL.TOOL_CALL event, one array per event. */
  const batches: string[][] = [];
  /** The `error` of each MODEL.ERROR event. */
  const errors: unknown[] = [];
  const parent = createMachine({
    initial: 'listening',
    states: {
      listening: {
        invoke: { src: modelStreamLogic, input: { model, prompt: [], tools: [], ...extra } },
        on: {
          STOP: 'stopped',
          '*': {
            actions: ({ event }) => {
              events.push(event.type);
              if (event.type === 'MODEL.ERROR') errors.push((event as unknown as { error: unknown }).error);
              if (event.type === 'MODEL.TOOL_CALL') batches.push((event as unknown as { calls: { callId: string }[] }).calls.map((c) => c.callId));
            },
          },
        },
      },
      stopped: {},
    },
  });
  const actor = createActor(parent).start();
  return { actor, events, batches, errors };
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

  const call = (id: string): LanguageModelV3StreamPart => ({ type: 'tool-call', toolCallId: id, toolName: 'work', input: '{}' });

  it('reports the calls of one burst in one event, in order, before the text that follows them', async () => {
    const m = manualModel();
    const { events, batches } = listen(m.model);
    await tick();
    // Three calls and a text delta that the stream holds at once (one network chunk): one event for the calls.
    m.push(call('a'));
    m.push(call('b'));
    m.push(call('c'));
    m.push({ type: 'text-delta', id: 't', delta: 'and then' });
    await tick();
    expect(events).toEqual(['MODEL.TOOL_CALL', 'MODEL.TEXT']);
    expect(batches).toEqual([['a', 'b', 'c']]);
    m.push(call('d'));
    m.push(finish);
    await tick();
    expect(events).toEqual(['MODEL.TOOL_CALL', 'MODEL.TEXT', 'MODEL.TOOL_CALL', 'MODEL.FINISH']);
    expect(batches).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('never holds a ready call while the stream waits for its next part (dispatch starts while the model streams)', async () => {
    const m = manualModel();
    const { events, batches } = listen(m.model);
    await tick();
    m.push(call('a'));
    await tick();
    // Nothing else has arrived, the response is not finished: the call is reported already.
    expect(events).toEqual(['MODEL.TOOL_CALL']);
    expect(batches).toEqual([['a']]);
    m.push(call('b'));
    await tick();
    expect(batches).toEqual([['a'], ['b']]);
  });

  it('reports the calls that arrived before a broken stream, then the error', async () => {
    const m = manualModel();
    const { events, batches } = listen(m.model);
    await tick();
    m.push(call('a'));
    m.push({ type: 'error', error: new Error('connection reset') });
    await tick();
    expect(events).toEqual(['MODEL.TOOL_CALL', 'MODEL.ERROR']);
    expect(batches).toEqual([['a']]);
  });

  it('holds at most MAX_HELD_CALLS ready calls: a longer burst is reported in slices, in order', async () => {
    const m = manualModel();
    const { batches } = listen(m.model);
    await tick();
    const ids = Array.from({ length: MAX_HELD_CALLS + 6 }, (_, i) => `c${i}`);
    for (const id of ids) m.push(call(id));
    m.push(finish);
    await tick();
    expect(batches.map((b) => b.length)).toEqual([MAX_HELD_CALLS, 6]);
    expect(batches.flat()).toEqual(ids);
  });

  it('sees a burst through a provider-like pipeline (two transform streams) as one event', async () => {
    // AI SDK providers parse the response body through transform streams: the parts of one
    // network chunk reach the reader a few microtasks apart, never a macrotask.
    let controller!: ReadableStreamDefaultController<LanguageModelV3StreamPart>;
    const source = new ReadableStream<LanguageModelV3StreamPart>({ start: (c) => void (controller = c) });
    const pass = () => new TransformStream<LanguageModelV3StreamPart, LanguageModelV3StreamPart>({ transform: (part, c) => c.enqueue(part) });
    const model = {
      specificationVersion: 'v3',
      provider: 'test',
      modelId: 'piped',
      supportedUrls: {},
      doGenerate: () => Promise.reject(new Error('not used')),
      doStream: async () => ({ stream: source.pipeThrough(pass()).pipeThrough(pass()) }),
    } as unknown as LanguageModelV3;
    const { events, batches } = listen(model);
    await tick();
    for (const id of ['a', 'b', 'c']) controller.enqueue(call(id));
    controller.enqueue(finish);
    await tick();
    expect(events).toEqual(['MODEL.TOOL_CALL', 'MODEL.FINISH']);
    expect(batches).toEqual([['a', 'b', 'c']]);
  });

  it('reports nothing after an error part or the finish part, whatever the provider still sends', async () => {
    for (const last of [{ type: 'error', error: new Error('overloaded') } as const, finish]) {
      const m = manualModel();
      const { events } = listen(m.model);
      await tick();
      m.push(last);
      m.push({ type: 'text-delta', id: 't', delta: 'more' });
      m.push(call('late'));
      m.push(finish);
      await tick();
      expect(events).toEqual([last.type === 'error' ? 'MODEL.ERROR' : 'MODEL.FINISH']);
    }
  });

  it("hands the provider's stream back (unlocked) once done with it: after the finish, an error part or the step's stop", async () => {
    for (const end of ['finish', 'error', 'stop'] as const) {
      const m = manualModel();
      const { actor } = listen(m.model);
      await tick();
      m.push({ type: 'text-delta', id: 't', delta: 'x' });
      await tick();
      expect(m.stream().locked).toBe(true);
      if (end === 'stop') {
        actor.send({ type: 'STOP' });
        m.push({ type: 'text-delta', id: 't', delta: 'y' });
      } else m.push(end === 'finish' ? finish : { type: 'error', error: new Error('overloaded') });
      await tick();
      expect(m.stream().locked).toBe(false);
    }
  });

  it('a stream that closes without a finish part is an error saying so', async () => {
    const m = manualModel();
    const { events, errors } = listen(m.model);
    await tick();
    m.push({ type: 'text-delta', id: 't', delta: 'cut' });
    m.close();
    await tick();
    expect(events).toEqual(['MODEL.TEXT', 'MODEL.ERROR']);
    expect(errors).toEqual([new Error('the model stream ended without a finish part')]);
  });

  it("the provider's warnings are told to onWarnings, if given; none is told once the step stopped listening", async () => {
    const warnings: SharedV3Warning[] = [{ type: 'other', message: 'clamped' }];
    // Without onWarnings, warnings are ignored.
    const bare = manualModel();
    const quiet = listen(bare.model);
    await tick();
    bare.push({ type: 'stream-start', warnings });
    bare.push(finish);
    await tick();
    expect(quiet.events).toEqual(['MODEL.FINISH']);
    // With it, each request's warnings as they arrive, until the step stops listening.
    const told: (readonly SharedV3Warning[])[] = [];
    const m = manualModel();
    const { actor } = listen(m.model, { onWarnings: (w) => void told.push(w) });
    await tick();
    m.push({ type: 'stream-start', warnings });
    await tick();
    expect(told).toEqual([warnings]);
    actor.send({ type: 'STOP' });
    m.push({ type: 'stream-start', warnings: [{ type: 'other', message: 'too late' }] });
    await tick();
    expect(told).toEqual([warnings]);
  });
});
