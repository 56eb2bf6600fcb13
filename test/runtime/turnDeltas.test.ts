/**
 * Issue 15.2: the turn handle streams the model's text and reasoning deltas as they arrive, in
 * order, each tagged with its step, with an end marker per step and one for the turn; per step,
 * their concatenation is the text the log holds coalesced in `llm/stream` events.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import type { LogEventOf } from '../../src/protocol/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import type { TurnDelta } from '../../src/runtime/turnDeltas.js';
import { settle } from './settle.js';

function setup() {
  const clock = new ManualClock();
  const read = defineTool({ name: 'read', input: z.object({ path: z.string() }), isConcurrencySafe: () => true, execute: ({ path }) => `contents of ${path}` });
  return { clock, rt: createRuntime({ tools: [read], clock }) };
}

/** Per step and kind, the text the log holds (`llm/stream` events, in log order). */
function loggedText(events: readonly { type: string }[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of events) {
    if (e.type !== 'llm/stream') continue;
    const s = e as LogEventOf<'llm/stream'>;
    out[`${s.stepIndex}:${s.kind}`] = (out[`${s.stepIndex}:${s.kind}`] ?? '') + s.text;
  }
  return out;
}

function streamedText(deltas: readonly TurnDelta[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of deltas) {
    if (d.type !== 'text-delta' && d.type !== 'reasoning-delta') continue;
    const k = `${d.stepIndex}:${d.type === 'text-delta' ? 'text' : 'reasoning'}`;
    out[k] = (out[k] ?? '') + d.delta;
  }
  return out;
}

describe('text deltas on the turn handle (issue 15.2)', () => {
  it('arrive in order, tagged with their step, end with step-end per step and turn-end; per step they equal the llm/stream text', async () => {
    const { clock, rt } = setup();
    const model = scriptedModel(
      [
        { reasoning: ['I should ', 'read a.txt'], text: ['Let me ', 'look ', 'at a.txt.'], toolCalls: [{ toolName: 'read', input: { path: 'a.txt' } }] },
        { reasoning: ['it says ', 'hello'], text: ['a.txt ', 'says ', 'hello', '.'] },
      ],
      { clock, chunkDelayMs: 3 },
    );
    const turn = rt.startTurn({ model, input: 'what is in a.txt?' });
    const seen: TurnDelta[] = [];
    const unsubscribe = turn.onDelta((d) => seen.push(d));
    const iterated: TurnDelta[] = [];
    const reading = (async () => {
      for await (const d of turn.deltas()) iterated.push(d);
    })();
    const out = await settle(clock, turn.done);
    await reading;
    unsubscribe();
    expect(out.outcome).toBe('completed');

    // One delta per streamed piece, in arrival order, then the markers.
    expect(seen.map((d) => (d.type === 'text-delta' || d.type === 'reasoning-delta' ? `${d.stepIndex}:${d.delta}` : d.type))).toEqual([
      '0:I should ',
      '0:read a.txt',
      '0:Let me ',
      '0:look ',
      '0:at a.txt.',
      'step-end',
      '1:it says ',
      '1:hello',
      '1:a.txt ',
      '1:says ',
      '1:hello',
      '1:.',
      'step-end',
      'turn-end',
    ]);
    expect(seen.filter((d) => d.type === 'step-end')).toEqual([
      { type: 'step-end', stepIndex: 0, finishReason: 'tool-calls' },
      { type: 'step-end', stepIndex: 1, finishReason: 'stop' },
    ]);
    expect(seen.at(-1)).toEqual({ type: 'turn-end', outcome: 'completed' });
    expect(iterated).toEqual(seen); // the async iterable gives the same sequence and ends with the turn

    // The concatenation, per step and kind, is what the log holds (coalesced).
    const events = rt.log.events();
    expect(streamedText(seen)).toEqual(loggedText(events));
    expect(streamedText(seen)).toEqual({ '0:reasoning': 'I should read a.txt', '0:text': 'Let me look at a.txt.', '1:reasoning': 'it says hello', '1:text': 'a.txt says hello.' });
    expect(out.text).toBe('a.txt says hello.');
  });

  it('marks a failed request whose partial text the retry replaces; after the marker the deltas equal the logged text', async () => {
    const { clock, rt } = setup();
    const model = scriptedModel(
      [
        { text: ['half ', 'an answer'], streamError: { error: Object.assign(new Error('connection reset'), { name: 'APICallError', isRetryable: true }), afterParts: 3 } },
        { text: ['the ', 'whole answer'] },
      ],
      { clock, chunkDelayMs: 1 },
    );
    const turn = rt.startTurn({ model, input: 'answer' });
    const seen: TurnDelta[] = [];
    turn.onDelta((d) => seen.push(d));
    const out = await settle(clock, turn.done);
    expect(out.outcome).toBe('completed');
    const marker = seen.findIndex((d) => d.type === 'request-error');
    expect(marker).toBeGreaterThan(0);
    expect(seen[marker]).toMatchObject({ stepIndex: 0, action: 'retry' });
    expect(streamedText(seen.slice(marker + 1))).toEqual({ '0:text': 'the whole answer' });
    expect(out.text).toBe('the whole answer');
  });

  it('a listener that throws breaks nothing; subscribing after the turn ended gives turn-end at once', async () => {
    const { clock, rt } = setup();
    const model = scriptedModel([{ text: ['a', 'b'] }], { clock });
    const turn = rt.startTurn({ model, input: 'x' });
    turn.onDelta(() => {
      throw new Error('bad UI');
    });
    const out = await settle(clock, turn.done);
    expect(out.text).toBe('ab');
    const late: TurnDelta[] = [];
    turn.onDelta((d) => late.push(d));
    expect(late).toEqual([{ type: 'turn-end', outcome: 'completed' }]);
    const it2: TurnDelta[] = [];
    for await (const d of turn.deltas()) it2.push(d);
    expect(it2).toEqual([{ type: 'turn-end', outcome: 'completed' }]);
  });
});
