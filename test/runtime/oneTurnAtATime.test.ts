/**
 * Issue 11.9 (SPEC §8.16): one turn at a time per session. A second `startTurn` while a turn runs
 * (a double submit in a UI) is queued: it starts after the first has ended (`turn/end` in the log),
 * its first request sees the first turn's question, results and answer, and the log never
 * interleaves the two. A queued turn cancelled before it starts ends `cancelled` without a request.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { ManualClock, sleep } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { settle } from './settle.js';

function setup() {
  const clock = new ManualClock();
  const read = defineTool({
    name: 'read',
    input: z.object({ path: z.string(), ms: z.number().default(0) }),
    isConcurrencySafe: () => true,
    execute: async (a, exec) => {
      await sleep(clock, a.ms, exec.signal);
      return `contents of ${a.path}`;
    },
  });
  return { clock, rt: createRuntime({ tools: [read], clock }) };
}

/** The turn each event belongs to, in log order, with consecutive repeats collapsed. */
function turnRuns(events: readonly LogEvent[]): string[] {
  const runs: string[] = [];
  for (const e of events) {
    const t = 'turnId' in e ? e.turnId : undefined;
    if (t !== undefined && runs.at(-1) !== t) runs.push(t);
  }
  return runs;
}

describe('one turn at a time per session (issue 11.9)', () => {
  it('a second startTurn while the first runs waits for it, then sees its results; the log does not interleave', async () => {
    const { clock, rt } = setup();
    const first = scriptedModel([{ toolCalls: [{ toolName: 'read', input: { path: 'a.txt', ms: 50 } }] }, { text: 'a.txt says hello' }], { clock, chunkDelayMs: 5 });
    const second = scriptedModel([{ text: 'as I said: hello' }], { clock });
    const t1 = rt.startTurn({ model: first, input: 'what is in a.txt?' });
    const t2 = rt.startTurn({ model: second, input: 'say it again' });
    expect([t1.turnId, t2.turnId]).toEqual(['turn-1', 'turn-2']);
    const [o1, o2] = await settle(clock, Promise.all([t1.done, t2.done]));
    expect(o1).toMatchObject({ turnId: 'turn-1', outcome: 'completed', steps: 2 });
    expect(o2).toMatchObject({ turnId: 'turn-2', outcome: 'completed', steps: 1 });

    const events = rt.log.events();
    expect(turnRuns(events)).toEqual(['turn-1', 'turn-2']);
    const end1 = events.findIndex((e) => e.type === 'turn/end' && e.turnId === 'turn-1');
    const start2 = events.findIndex((e) => e.type === 'turn/start' && e.turnId === 'turn-2');
    expect(end1).toBeLessThan(start2);

    // The second turn's first request carries the whole first turn, then its own question.
    expect(second.calls).toHaveLength(1);
    const prompt = second.calls[0]!.prompt;
    expect(prompt.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    const text = JSON.stringify(prompt);
    for (const s of ['what is in a.txt?', 'contents of a.txt', 'a.txt says hello', 'say it again']) expect(text).toContain(s);
    // and the first turn never saw the second's question
    expect(JSON.stringify(first.calls.map((c) => c.prompt))).not.toContain('say it again');
  });

  it('a queued turn cancelled before it starts ends cancelled without a model request; the turn after it still runs', async () => {
    const { clock, rt } = setup();
    const first = scriptedModel([{ toolCalls: [{ toolName: 'read', input: { path: 'slow', ms: 100 } }] }, { text: 'one' }], { clock });
    const never = scriptedModel([{ text: 'never' }], { clock });
    const third = scriptedModel([{ text: 'three' }], { clock });
    const t1 = rt.startTurn({ model: first, input: 'first' });
    const t2 = rt.startTurn({ model: never, input: 'second' });
    const t3 = rt.startTurn({ model: third, input: 'third' });
    t2.cancel('changed my mind');
    const [o1, o2, o3] = await settle(clock, Promise.all([t1.done, t2.done, t3.done]));
    expect([o1.outcome, o2.outcome, o3.outcome]).toEqual(['completed', 'cancelled', 'completed']);
    expect(never.calls).toHaveLength(0);
    const events = rt.log.events();
    expect(turnRuns(events)).toEqual(['turn-1', 'turn-2', 'turn-3']);
    expect(events.filter((e) => e.turnId === 'turn-2').map((e) => e.type)).toEqual(['turn/start', 'turn/end']);
    // The third turn's prompt shows the cancelled turn's question: it was asked, and never answered.
    expect(JSON.stringify(third.calls[0]!.prompt)).toContain('second');
  });

  it("a queued turn's signal aborted before it starts cancels it the same way", async () => {
    const { clock, rt } = setup();
    const first = scriptedModel([{ toolCalls: [{ toolName: 'read', input: { path: 'slow', ms: 100 } }] }, { text: 'one' }], { clock });
    const never = scriptedModel([{ text: 'never' }], { clock });
    const ac = new AbortController();
    const t1 = rt.startTurn({ model: first, input: 'first' });
    const t2 = rt.startTurn({ model: never, input: 'second', signal: ac.signal });
    ac.abort();
    const [o1, o2] = await settle(clock, Promise.all([t1.done, t2.done]));
    expect([o1.outcome, o2.outcome]).toEqual(['completed', 'cancelled']);
    expect(never.calls).toHaveLength(0);
  });
});
