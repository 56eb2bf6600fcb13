/**
 * What a step asks of the model and logs about it, beside text and calls (docs/tools.md "Call
 * options", "Warnings and usage", "Reasoning"): the call options of the runtime and the turn reach
 * every request (the turn's win field by field, `headers` and `providerOptions` merge); each
 * provider warning is a `warning` event with code `MODEL_WARNING`; a reasoning block that closes
 * with provider metadata is logged with it (`llm/stream.providerMetadata`).
 */
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { LogEventSchema, type LogEvent, type LogEventOf } from '../../src/protocol/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { createRuntime, type RuntimeOptions } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { settle } from './settle.js';

const finish: LanguageModelV3StreamPart = {
  type: 'finish',
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: undefined } },
};

function setup(extra: Partial<RuntimeOptions> = {}) {
  const clock = new ManualClock();
  return { clock, rt: createRuntime({ clock, ...extra }) };
}

const of = <T extends LogEvent['type']>(events: readonly LogEvent[], type: T) => events.filter((e): e is LogEventOf<T> => e.type === type);

const streamed = (events: readonly LogEvent[]) =>
  events.flatMap((e) => (e.type === 'llm/stream' ? [{ kind: e.kind, text: e.text, ...(e.providerMetadata ? { providerMetadata: e.providerMetadata } : {}) }] : []));

describe('call options', () => {
  it("the runtime's and the turn's options reach the request: the turn's win field by field, headers and providerOptions merge", async () => {
    const { clock, rt } = setup({
      callOptions: { maxOutputTokens: 100, temperature: 1, headers: { a: '1', b: '1' }, providerOptions: { anthropic: { x: 1 } } },
    });
    const model = scriptedModel([{ text: 'ok' }], { clock });
    const turn = rt.startTurn({
      model,
      input: 'hi',
      callOptions: { temperature: 0, seed: 7, headers: { b: '2' }, providerOptions: { openai: { y: 2 } }, toolChoice: { type: 'required' } },
    });
    expect((await settle(clock, turn.done)).outcome).toBe('completed');
    const { options } = model.calls[0]!;
    expect(options).toMatchObject({
      maxOutputTokens: 100,
      temperature: 0,
      seed: 7,
      headers: { a: '1', b: '2' },
      providerOptions: { anthropic: { x: 1 }, openai: { y: 2 } },
      toolChoice: { type: 'required' },
    });
    // Settings nobody gave are left to the provider.
    for (const key of ['topP', 'topK', 'stopSequences', 'presencePenalty', 'frequencyPenalty']) expect(options).not.toHaveProperty(key);
  });

  it("a turn's options alone, or the runtime's alone, are passed as given", async () => {
    const { clock, rt } = setup({ callOptions: { topP: 0.5, headers: { a: '1' } } });
    const model = scriptedModel([{ text: 'one' }, { text: 'two' }], { clock });
    await settle(clock, rt.startTurn({ model, input: 'one' }).done);
    await settle(clock, rt.startTurn({ model, input: 'two', callOptions: { topK: 3, providerOptions: { openai: { y: 2 } } } }).done);
    expect(model.calls[0]!.options).toMatchObject({ topP: 0.5, headers: { a: '1' } });
    expect(model.calls[0]!.options).not.toHaveProperty('providerOptions');
    expect(model.calls[1]!.options).toMatchObject({ topP: 0.5, topK: 3, headers: { a: '1' }, providerOptions: { openai: { y: 2 } } });
  });
});

describe('provider warnings', () => {
  it('each warning of a request is one warning event with code MODEL_WARNING, in its step, naming what the provider said', async () => {
    const { clock, rt } = setup();
    const warnings = [
      { type: 'unsupported', feature: 'topK', details: 'this model has no topK' },
      { type: 'other', message: 'the output limit was clamped to 4096' },
    ] as const;
    const model = scriptedModel([{ parts: [{ type: 'stream-start', warnings: [...warnings] }, { type: 'text-delta', id: 't', delta: 'ok' }, finish] }], { clock });
    const turn = rt.startTurn({ model, input: 'hi' });
    expect((await settle(clock, turn.done)).outcome).toBe('completed');
    const events = rt.log.events();
    for (const e of events) LogEventSchema.parse(e);
    const logged = events.filter((e) => e.type === 'warning');
    expect(logged).toHaveLength(2);
    expect(logged.map((e) => e.type === 'warning' && [e.code, e.turnId, e.stepIndex])).toEqual([
      ['MODEL_WARNING', turn.turnId, 0],
      ['MODEL_WARNING', turn.turnId, 0],
    ]);
    const messages = logged.map((e) => (e.type === 'warning' ? e.message : ''));
    expect(messages[0]).toContain('topK');
    expect(messages[0]).toContain('this model has no topK');
    expect(messages[1]).toContain('the output limit was clamped to 4096');
    // Logged inside the step, before what the model streamed.
    expect(events.map((e) => e.type)).toEqual(['turn/start', 'step/start', 'warning', 'warning', 'llm/stream', 'step/end', 'turn/end']);
  });

  it('the message names the warning type and what the provider said, in that order; the warning itself is kept as plain JSON', async () => {
    const { clock, rt } = setup();
    class Odd {
      type = 'other';
      message = 'a class instance';
      missing = undefined;
    }
    const warnings: unknown[] = [
      { type: 'unsupported', feature: 'topK', details: 'this model has no topK' },
      { type: 'compatibility', feature: 'seed', details: '', message: 'ignored' },
      { type: 'other', message: 'clamped' },
      {},
      { type: 7, feature: 3, details: null, message: '' },
      { type: 'other', message: 'x'.repeat(3000) },
      new Odd(),
      { type: 'other', message: 'not copyable', big: 1n },
      { type: 'other', message: 'an array as JSON', toJSON: () => [1] },
      { type: 'other', message: 'null as JSON', toJSON: () => null },
      { type: 'other', message: 'a number as JSON', toJSON: () => 5 },
    ];
    const parts = [{ type: 'stream-start', warnings }, { type: 'text-delta', id: 't', delta: 'ok' }, finish] as LanguageModelV3StreamPart[];
    await settle(clock, rt.startTurn({ model: scriptedModel([{ parts }], { clock }), input: 'hi' }).done);
    const logged = rt.log.events().flatMap((e) => (e.type === 'warning' ? [e] : []));
    expect(logged.map((e) => e.message)).toEqual([
      'model warning (unsupported): topK: this model has no topK',
      'model warning (compatibility): seed: ignored',
      'model warning (other): clamped',
      'model warning (other): no details',
      'model warning (other): no details',
      `model warning (other): ${'x'.repeat(2000 - 'model warning (other): '.length)}`,
      'model warning (other): a class instance',
      'model warning (other): not copyable',
      'model warning (other): an array as JSON',
      'model warning (other): null as JSON',
      'model warning (other): a number as JSON',
    ]);
    expect(logged.map((e) => e.data?.['warning'])).toEqual([
      { type: 'unsupported', feature: 'topK', details: 'this model has no topK' },
      { type: 'compatibility', feature: 'seed', details: '', message: 'ignored' },
      { type: 'other', message: 'clamped' },
      {},
      { type: 7, feature: 3, details: null, message: '' },
      { type: 'other', message: 'x'.repeat(3000) },
      { type: 'other', message: 'a class instance' },
      {},
      {},
      {},
      {},
    ]);
    expect(Object.getPrototypeOf(logged[6]!.data?.['warning'])).toBe(Object.prototype);
  });

  it('a request without warnings logs none', async () => {
    const { clock, rt } = setup();
    await settle(clock, rt.startTurn({ model: scriptedModel([{ text: 'ok' }], { clock }), input: 'hi' }).done);
    expect(rt.log.events().filter((e) => e.type === 'warning')).toEqual([]);
  });
});

describe('reasoning', () => {
  it('a reasoning block that closes with provider metadata is logged with it, its text whole; the text after it on its own', async () => {
    const { clock, rt } = setup();
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'reasoning-start', id: 'r1' },
      { type: 'reasoning-delta', id: 'r1', delta: 'Let me ' },
      { type: 'reasoning-delta', id: 'r1', delta: 'think.', providerMetadata: { anthropic: { signature: 'sig-1' } } },
      { type: 'reasoning-end', id: 'r1' },
      { type: 'text-delta', id: 't', delta: 'The answer.' },
      finish,
    ];
    const turn = rt.startTurn({ model: scriptedModel([{ parts }], { clock }), input: 'hi' });
    expect((await settle(clock, turn.done)).outcome).toBe('completed');
    expect(streamed(rt.log.events())).toEqual([
      { kind: 'reasoning', text: 'Let me think.', providerMetadata: { anthropic: { signature: 'sig-1' } } },
      { kind: 'text', text: 'The answer.' },
    ]);
  });

  it('redacted thinking (metadata, no text) is logged as an empty reasoning block with its metadata; text before it is logged first', async () => {
    const { clock, rt } = setup();
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-delta', id: 't', delta: 'First, ' },
      { type: 'reasoning-start', id: 'r1', providerMetadata: { anthropic: { redactedData: 'xyz' } } },
      { type: 'reasoning-end', id: 'r1' },
      { type: 'text-delta', id: 't2', delta: 'then.' },
      finish,
    ];
    const turn = rt.startTurn({ model: scriptedModel([{ parts }], { clock }), input: 'hi' });
    expect((await settle(clock, turn.done)).outcome).toBe('completed');
    expect(streamed(rt.log.events())).toEqual([
      { kind: 'text', text: 'First, ' },
      { kind: 'reasoning', text: '', providerMetadata: { anthropic: { redactedData: 'xyz' } } },
      { kind: 'text', text: 'then.' },
    ]);
  });

  it("metadata sent at a block's start and at its end are merged; a block without metadata is logged as plain reasoning", async () => {
    const { clock, rt } = setup();
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'reasoning-start', id: 'r2', providerMetadata: { anthropic: { a: 1 } } },
      { type: 'reasoning-delta', id: 'r2', delta: 'signed' },
      { type: 'reasoning-end', id: 'r2', providerMetadata: { anthropic: { signature: 'sig-2' }, other: { b: 2 } } },
      { type: 'reasoning-start', id: 'plain' },
      { type: 'reasoning-delta', id: 'plain', delta: 'no signature' },
      { type: 'reasoning-end', id: 'plain' },
      finish,
    ];
    const turn = rt.startTurn({ model: scriptedModel([{ parts }], { clock }), input: 'hi' });
    expect((await settle(clock, turn.done)).outcome).toBe('completed');
    expect(streamed(rt.log.events())).toEqual([
      { kind: 'reasoning', text: 'signed', providerMetadata: { anthropic: { a: 1, signature: 'sig-2' }, other: { b: 2 } } },
      { kind: 'reasoning', text: 'no signature' },
    ]);
  });
});

describe('reasoning, first in a response', () => {
  it('a signed block that opens the response is logged with its metadata; the turn delta stream gets its text, never an empty delta', async () => {
    const { clock, rt } = setup();
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'reasoning-start', id: 'r0', providerMetadata: { anthropic: { redactedData: 'abc' } } },
      { type: 'reasoning-end', id: 'r0' },
      { type: 'reasoning-start', id: 'r1' },
      { type: 'reasoning-delta', id: 'r1', delta: 'Hm.' },
      { type: 'reasoning-end', id: 'r1', providerMetadata: { anthropic: { signature: 's' } } },
      { type: 'text-delta', id: 't', delta: 'Yes.' },
      finish,
    ];
    const turn = rt.startTurn({ model: scriptedModel([{ parts }], { clock }), input: 'hi' });
    const deltas: string[] = [];
    turn.onDelta((d) => void (d.type === 'text-delta' || d.type === 'reasoning-delta' ? deltas.push(`${d.type}:${d.delta}`) : undefined));
    expect((await settle(clock, turn.done)).outcome).toBe('completed');
    expect(streamed(rt.log.events())).toEqual([
      { kind: 'reasoning', text: '', providerMetadata: { anthropic: { redactedData: 'abc' } } },
      { kind: 'reasoning', text: 'Hm.', providerMetadata: { anthropic: { signature: 's' } } },
      { kind: 'text', text: 'Yes.' },
    ]);
    expect(deltas).toEqual(['reasoning-delta:Hm.', 'text-delta:Yes.']);
  });
});

describe('llm/stream coalescing (docs/parallel.md)', () => {
  it('one event per contiguous run of text or reasoning; the buffer is flushed once it holds 8 KiB, at a switch of kind and at the finish', async () => {
    const { clock, rt } = setup();
    const kib8 = 'x'.repeat(8192);
    const model = scriptedModel([{ reasoning: ['mull', 'ing'], text: [kib8.slice(0, 4096), kib8.slice(4096), 'y', 'z'] }], { clock });
    await settle(clock, rt.startTurn({ model, input: 'hi' }).done);
    expect(streamed(rt.log.events())).toEqual([
      { kind: 'reasoning', text: 'mulling' },
      { kind: 'text', text: kib8 },
      { kind: 'text', text: 'yz' },
    ]);
  });

  it('empty deltas and a reasoning block with neither text nor metadata do not break a run', async () => {
    const { clock, rt } = setup();
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'reasoning-delta', id: 'r', delta: 'one' },
      { type: 'text-delta', id: 't', delta: '' },
      { type: 'reasoning-delta', id: 'r', delta: ' two' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'text-delta', id: 't', delta: 'a' },
      { type: 'reasoning-delta', id: 'r2', delta: '' },
      { type: 'reasoning-start', id: 'empty' },
      { type: 'reasoning-end', id: 'empty' },
      { type: 'text-delta', id: 't', delta: 'b' },
      finish,
    ];
    await settle(clock, rt.startTurn({ model: scriptedModel([{ parts }], { clock }), input: 'hi' }).done);
    expect(streamed(rt.log.events())).toEqual([
      { kind: 'reasoning', text: 'one two' },
      { kind: 'text', text: 'ab' },
    ]);
  });
});

describe('streamed tool input (docs/tools.md "Streaming dispatch")', () => {
  it('a call is dispatched when its streamed arguments close, or at its tool-input-end if they are too deep to tell; before the text after it and its late tool-call part', async () => {
    const clock = new ManualClock();
    // Nested deeper than the early-end limit (EARLY_END_LIMITS.maxDepth): only the provider's end of input completes it.
    const deepInput = `{"path":"b","deep":${'['.repeat(70)}${']'.repeat(70)}}`;
    const read = defineTool({ name: 'read', input: z.object({ path: z.string() }), isConcurrencySafe: () => true, execute: async ({ path }) => `contents of ${path}` });
    const rt = createRuntime({ clock, tools: [read] });
    // How OpenAI Chat streams: arguments as they come, tool-input-end and tool-call only when the stream closes.
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'tool-input-start', id: 'c1', toolName: 'read' },
      { type: 'tool-input-delta', id: 'c1', delta: '{"path":' },
      { type: 'tool-input-delta', id: 'c1', delta: '"a"}' },
      { type: 'tool-input-end', id: 'c1' },
      { type: 'tool-input-start', id: 'c2', toolName: 'read' },
      { type: 'tool-input-delta', id: 'c2', delta: deepInput },
      { type: 'tool-input-end', id: 'c2' },
      { type: 'text-delta', id: 't', delta: 'Reading.' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: '{"path":"a"}' },
      { type: 'tool-call', toolCallId: 'c2', toolName: 'read', input: deepInput },
      { ...finish, finishReason: { unified: 'tool-calls', raw: 'tool_calls' } },
    ];
    const turn = rt.startTurn({ model: scriptedModel([{ parts }, { text: 'done' }], { clock }), input: 'hi' });
    expect((await settle(clock, turn.done)).outcome).toBe('completed');
    const firstStep = rt.log.events().filter((e) => 'stepIndex' in e && e.stepIndex === 0);
    expect(firstStep.flatMap((e) => (e.type === 'tool/call' ? [`call ${e.callId} ${e.input}`] : e.type === 'llm/stream' ? [`text ${e.text}`] : []))).toEqual([
      'call c1 {"path":"a"}',
      `call c2 ${deepInput}`,
      'text Reading.',
    ]);
    // (the deep one is then refused by the pipeline's argument limits)
    expect(of(rt.log.events(), 'tool/result').map((e) => [e.callId, e.result.isError])).toEqual([
      ['c1', false],
      ['c2', true],
    ]);
  });
});


describe('a response without its finish part', () => {
  it('is a failed request, whose error says the stream ended without a finish part', async () => {
    const { clock, rt } = setup({ retryPolicy: { maxAttempts: 1, decide: () => ({ action: 'give-up', reason: 'test' }) } });
    const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }, { type: 'text-delta', id: 't', delta: 'half' }];
    const out = await settle(clock, rt.startTurn({ model: scriptedModel([{ parts }], { clock }), input: 'hi' }).done);
    expect(out.error).toBe('model request failed (fatal): the model stream ended without a finish part (test)');
  });
});

describe('finish reasons', () => {
  it("a provider's finish reason, sent as a v3 object or a bare string, is the step's (step/end.finishReason); none given is 'other'", async () => {
    const { clock, rt } = setup();
    const text: LanguageModelV3StreamPart = { type: 'text-delta', id: 't', delta: 'ok' };
    const start: LanguageModelV3StreamPart = { type: 'stream-start', warnings: [] };
    const finishWith = (finishReason: unknown) => ({ parts: [start, text, { ...finish, finishReason } as LanguageModelV3StreamPart] });
    const model = scriptedModel([finishWith('length'), finishWith({ unified: 'content-filter', raw: 'x' }), finishWith(undefined)], { clock });
    for (const input of ['a', 'b', 'c']) await settle(clock, rt.startTurn({ model, input }).done);
    expect(rt.log.events().flatMap((e) => (e.type === 'step/end' ? [e.finishReason] : []))).toEqual(['length', 'content-filter', 'other']);
  });
});
