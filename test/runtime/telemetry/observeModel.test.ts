/**
 * observeModel (issue 27): a request is told when it starts and when its stream ends (its finish
 * part, an error part, the end, or a failed request), and the stream reaches the step unchanged.
 */
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../../src/adapters/model/index.js';
import { observeModel } from '../../../src/runtime/telemetry/observeModel.js';

async function readAll(stream: ReadableStream<LanguageModelV3StreamPart>): Promise<LanguageModelV3StreamPart[]> {
  const reader = stream.getReader();
  const parts: LanguageModelV3StreamPart[] = [];
  for (;;) {
    const r = await reader.read();
    if (r.done) return parts;
    parts.push(r.value);
  }
}

describe('observeModel', () => {
  it('tells each request its start and the end of its stream; the parts pass unchanged', async () => {
    const told: string[] = [];
    const script = [{ text: 'hello', toolCalls: [{ toolName: 't', input: {}, toolCallId: 'c' }] }];
    const model = observeModel(scriptedModel(script, { modelId: 'm1' }), (m) => {
      told.push(`start ${m.provider}/${m.modelId}`);
      return { ended: () => told.push('ended') };
    });
    expect(model.modelId).toBe('m1');
    const { stream } = await model.doStream({ prompt: [] });
    expect(told).toEqual(['start dsh/m1']);
    const parts = await readAll(stream);
    expect(told).toEqual(['start dsh/m1', 'ended']);
    const plain = await readAll((await scriptedModel(script, { modelId: 'm1' }).doStream({ prompt: [] })).stream);
    expect(parts.map((p) => p.type)).toEqual(plain.map((p) => p.type));
    expect(parts.at(-1)?.type).toBe('finish');
  });

  it('a request that fails before it streams is ended too, and its error reaches the caller', async () => {
    const told: string[] = [];
    const model = observeModel(scriptedModel([{ error: new Error('no route') }]), () => ({ ended: () => told.push('ended') }));
    await expect(model.doStream({ prompt: [] })).rejects.toThrow('no route');
    expect(told).toEqual(['ended']);
  });

  it('a stream that breaks is ended once; a listener that declines leaves the model as it is', async () => {
    let ended = 0;
    const broken = observeModel(scriptedModel([{ text: 'x', streamError: { error: new Error('reset') } }]), () => ({ ended: () => void ended++ }));
    await expect(readAll((await broken.doStream({ prompt: [] })).stream)).rejects.toThrow('reset');
    expect(ended).toBe(1);
    const listener = () => undefined;
    const declined = observeModel(scriptedModel([{ text: 'y' }]), listener);
    expect((await readAll((await declined.doStream({ prompt: [] })).stream)).some((p) => p.type === 'text-delta')).toBe(true);
    expect(observeModel(declined, listener)).toBe(declined);
  });
});
