/**
 * Issue 15.3: `turn.steer(message)` while a turn runs enters the prompt before the turn's next
 * model request, after the current step's results are committed (never inside a tool batch),
 * logged as `user/steer`; `runtime.followUp(message)` queues a new turn after the current one. The
 * late-steer rule: a steer the turn can no longer deliver (its last step was already under way, or
 * it has ended) becomes a follow-up turn, logged `turn/start` with `followUp.kind: 'late-steer'`.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { LogEventSchema, type LogEvent, type LogEventOf } from '../../src/protocol/index.js';
import { ManualClock, flushMicrotasks, sleep } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { describeEvent } from '../../src/protocol/logText.js';
import { settle } from './settle.js';

function setup() {
  const clock = new ManualClock();
  const read = defineTool({
    name: 'read',
    input: z.object({ path: z.string(), ms: z.number().default(0) }),
    isConcurrencySafe: () => true,
    execute: async ({ path, ms }, exec) => {
      await sleep(clock, ms, exec.signal);
      return `contents of ${path}`;
    },
  });
  return { clock, rt: createRuntime({ tools: [read], clock }) };
}

const types = (events: readonly LogEvent[]) => events.map((e) => (e.type === 'user/steer' ? `user/steer:${e.text}` : e.type));

/** The user messages' texts of a prompt, in order. */
function userTexts(prompt: readonly { role: string; content: unknown }[]): string[] {
  return prompt.flatMap((m) => (m.role === 'user' ? (m.content as Array<{ type: string; text?: string }>).map((p) => p.text ?? '') : []));
}

async function until(clock: ManualClock, cond: () => boolean) {
  for (let i = 0; i < 1_000 && !cond(); i++) {
    await new Promise((r) => setImmediate(r));
    if (!cond()) await clock.advance(1);
  }
  expect(cond()).toBe(true);
}

describe('steering a running turn (issue 15.3)', () => {
  it('a steer arriving mid-batch enters the next request after the batch results, logged between the steps', async () => {
    const { clock, rt } = setup();
    const model = scriptedModel(
      [
        { toolCalls: [{ toolName: 'read', input: { path: 'a.txt', ms: 40 } }, { toolName: 'read', input: { path: 'b.txt', ms: 80 } }] },
        { text: 'a and b read; checking c as asked.' },
      ],
      { clock },
    );
    const turn = rt.startTurn({ model, input: 'read a and b' });
    // Mid-batch: both calls logged, the first result in, the second still running.
    await until(clock, () => rt.log.events().filter((e) => e.type === 'tool/result').length === 1);
    expect(rt.log.events().filter((e) => e.type === 'tool/call')).toHaveLength(2);
    const steered = turn.steer('also look at c.txt');
    const out = await settle(clock, turn.done);
    expect(out.outcome).toBe('completed');
    expect(await steered).toMatchObject({ delivered: 'steer', stepIndex: 1 });

    const events = rt.log.events();
    for (const e of events) expect(LogEventSchema.safeParse(e).success).toBe(true);
    expect(types(events)).toEqual([
      'turn/start',
      'step/start',
      'tool/call',
      'tool/call',
      'tool/result',
      'tool/result',
      'step/end',
      'user/steer:also look at c.txt',
      'step/start',
      'llm/stream',
      'step/end',
      'turn/end',
    ]);
    const steer = events.find((e): e is LogEventOf<'user/steer'> => e.type === 'user/steer')!;
    expect(steer).toMatchObject({ turnId: 'turn-1', stepIndex: 1 });
    expect((await steered).delivered === 'steer' && (await steered as { seq: number }).seq).toBe(steer.seq);

    // What the model received: the first request knew nothing of it; the second has it after both results.
    expect(JSON.stringify(model.calls[0]!.prompt)).not.toContain('c.txt');
    const second = model.calls[1]!.prompt;
    expect(second.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    const toolMsg = second[2]!;
    expect(toolMsg.role === 'tool' && toolMsg.content.map((p) => (p.type === 'tool-result' ? p.output : undefined))).toEqual([
      { type: 'text', value: 'contents of a.txt' },
      { type: 'text', value: 'contents of b.txt' },
    ]);
    expect(userTexts(second)).toEqual(['read a and b', 'also look at c.txt']);
  });

  it('a steer sent while the turn is still queued enters its first request', async () => {
    const { clock, rt } = setup();
    const first = rt.startTurn({ model: scriptedModel([{ text: 'one' }], { clock, chunkDelayMs: 5 }), input: 'first' });
    const model = scriptedModel([{ text: 'two' }], { clock });
    const second = rt.startTurn({ model, input: 'second' });
    const steered = second.steer('and be brief');
    await settle(clock, Promise.all([first.done, second.done]));
    expect(await steered).toMatchObject({ delivered: 'steer', stepIndex: 0 });
    expect(userTexts(model.calls[0]!.prompt)).toEqual(['first', 'second', 'and be brief']);
  });

  it('late steer: one arriving during the last step (the model answers) becomes a follow-up turn, logged as such', async () => {
    const { clock, rt } = setup();
    const model = scriptedModel([{ text: ['The ', 'answer ', 'is 42.'] }, { text: 'In short: 42.' }], { clock, chunkDelayMs: 5 });
    const turn = rt.startTurn({ model, input: 'what is the answer?' });
    await until(clock, () => rt.log.events().some((e) => e.type === 'step/start'));
    const steered = turn.steer('keep it short');
    // The steer's promise settles (it became the follow-up) before the turn's `done` (issue 32 item 7).
    const order: string[] = [];
    void steered.then(() => order.push('steer'));
    void turn.done.then(() => order.push('done'));
    const first = await settle(clock, turn.done);
    expect(first.outcome).toBe('completed');
    const outcome = await steered;
    expect(order).toEqual(['steer', 'done']);
    expect(outcome.delivered).toBe('follow-up');
    if (outcome.delivered !== 'follow-up') return;
    expect(outcome.turn.turnId).toBe('turn-2');
    const second = await settle(clock, outcome.turn.done);
    expect(second).toMatchObject({ outcome: 'completed', text: 'In short: 42.' });

    const events = rt.log.events();
    // Nothing of it inside turn-1 (it ended without another request); turn-2 is the steer.
    expect(events.some((e) => e.type === 'user/steer')).toBe(false);
    const starts = events.filter((e): e is LogEventOf<'turn/start'> => e.type === 'turn/start');
    expect(starts.map((e) => [e.turnId, e.input, e.followUp])).toEqual([
      ['turn-1', 'what is the answer?', undefined],
      ['turn-2', 'keep it short', { kind: 'late-steer', after: 'turn-1' }],
    ]);
    const end1 = events.findIndex((e) => e.type === 'turn/end' && e.turnId === 'turn-1');
    expect(end1).toBeLessThan(events.indexOf(starts[1]!));
    expect(userTexts(model.calls[1]!.prompt)).toEqual(['what is the answer?', 'keep it short']);
  });

  it('late steer: several undelivered steers make one follow-up turn; a steer after the turn ended makes one at once', async () => {
    const { clock, rt } = setup();
    const model = scriptedModel([{ text: ['a', 'b'] }, { text: 'merged' }, { text: 'after' }], { clock, chunkDelayMs: 5 });
    const turn = rt.startTurn({ model, input: 'go' });
    await until(clock, () => rt.log.events().some((e) => e.type === 'step/start'));
    const s1 = turn.steer('first note');
    const s2 = turn.steer('second note');
    await settle(clock, turn.done);
    const [o1, o2] = await Promise.all([s1, s2]);
    expect(o1.delivered === 'follow-up' && o2.delivered === 'follow-up' && o1.turn === o2.turn).toBe(true);
    if (o1.delivered !== 'follow-up') return;
    await settle(clock, o1.turn.done);
    const o3 = await turn.steer('one more thing');
    expect(o3.delivered).toBe('follow-up');
    if (o3.delivered !== 'follow-up') return;
    await settle(clock, o3.turn.done);
    const starts = rt.log.events().filter((e): e is LogEventOf<'turn/start'> => e.type === 'turn/start');
    expect(starts.map((e) => [e.input, e.followUp?.kind])).toEqual([
      ['go', undefined],
      ['first note\n\nsecond note', 'late-steer'],
      ['one more thing', 'late-steer'],
    ]);
  });

  it('a steer pending when the turn is cancelled is not lost: it becomes the follow-up turn', async () => {
    const { clock, rt } = setup();
    const model = scriptedModel([{ toolCalls: [{ toolName: 'read', input: { path: 'a.txt', ms: 100 } }] }, { text: 'ok' }], { clock });
    const turn = rt.startTurn({ model, input: 'read' });
    await until(clock, () => rt.log.events().some((e) => e.type === 'tool/call'));
    const steered = turn.steer('never mind, read b');
    turn.cancel('user cancel');
    expect((await settle(clock, turn.done)).outcome).toBe('cancelled');
    const o = await steered;
    expect(o.delivered).toBe('follow-up');
    if (o.delivered !== 'follow-up') return;
    expect((await settle(clock, o.turn.done)).outcome).toBe('completed');
  });

  it('a steer arriving while a failed request waits to be retried enters the retried request (inside that step)', async () => {
    const { clock, rt } = setup();
    const busy = Object.assign(new Error('overloaded'), { name: 'APICallError', statusCode: 429, isRetryable: true });
    const model = scriptedModel([{ error: busy }, { text: 'ok, brief.' }], { clock });
    const turn = rt.startTurn({ model, input: 'explain' });
    await until(clock, () => rt.log.events().some((e) => e.type === 'agent/request-error'));
    const steered = turn.steer('be brief');
    expect((await settle(clock, turn.done)).outcome).toBe('completed');
    expect(await steered).toMatchObject({ delivered: 'steer', stepIndex: 0 });
    expect(types(rt.log.events())).toEqual(['turn/start', 'step/start', 'agent/request-error', 'user/steer:be brief', 'llm/stream', 'step/end', 'turn/end']);
    expect(userTexts(model.calls[0]!.prompt)).toEqual(['explain']);
    expect(userTexts(model.calls[1]!.prompt)).toEqual(['explain', 'be brief']);
  });

  it('rejects an empty steer with a TypeError', () => {
    const { rt } = setup();
    const turn = rt.startTurn({ model: scriptedModel([{ text: 'x' }]), input: 'x' });
    expect(() => turn.steer('  ')).toThrow(TypeError);
    expect(() => turn.steer(42 as never)).toThrow(TypeError);
  });
});

describe('follow-ups (issue 15.3)', () => {
  it('followUp queues a new turn after the current one, with its options, logged as a follow-up', async () => {
    const { clock, rt } = setup();
    const model = scriptedModel([{ toolCalls: [{ toolName: 'read', input: { path: 'a.txt', ms: 30 } }] }, { text: 'a read' }, { text: 'b next' }], { clock });
    const turn = rt.startTurn({ model, input: 'read a', system: 'be terse' });
    await flushMicrotasks();
    const next = rt.followUp('now b');
    expect(next.turnId).toBe('turn-2');
    await settle(clock, Promise.all([turn.done, next.done]));
    const events = rt.log.events();
    const starts = events.filter((e): e is LogEventOf<'turn/start'> => e.type === 'turn/start');
    expect(starts[1]).toMatchObject({ turnId: 'turn-2', input: 'now b', followUp: { kind: 'follow-up', after: 'turn-1' } });
    // It ran after turn-1 ended, with turn-1's options (model, system) and its whole history.
    expect(events.findIndex((e) => e.type === 'turn/end' && e.turnId === 'turn-1')).toBeLessThan(events.indexOf(starts[1]!));
    const prompt = model.calls[2]!.prompt;
    expect(prompt[0]).toEqual({ role: 'system', content: 'be terse' });
    expect(userTexts(prompt)).toEqual(['read a', 'now b']);
  });

  it('followUp without any turn before it needs a model; an empty message is a TypeError', async () => {
    const { clock, rt } = setup();
    expect(() => rt.followUp('hello')).toThrow(/options.model is required/);
    const t = rt.followUp('hello', { model: scriptedModel([{ text: 'hi' }], { clock }) });
    expect((await settle(clock, t.done)).text).toBe('hi');
    expect(rt.log.events().find((e) => e.type === 'turn/start')).not.toHaveProperty('followUp');
    expect(() => rt.followUp('')).toThrow(TypeError);
  });
});

describe('the new events in `dsh log` text', () => {
  it('names a steer, a follow-up turn and a progress event in one line each', () => {
    expect(describeEvent({ seq: 1, time: 0, type: 'user/steer', turnId: 't', stepIndex: 2, text: 'also c' })).toBe('  user/steer #2: "also c"');
    expect(describeEvent({ seq: 2, time: 0, type: 'turn/start', turnId: 'turn-2', input: 'more', followUp: { kind: 'late-steer', after: 'turn-1' } })).toBe(
      'turn/start turn-2 (late-steer after turn-1): more',
    );
    expect(describeEvent({ seq: 3, time: 0, type: 'tool/progress', callId: 'c1', toolName: 'bash', output: 'line\n', droppedChars: 10, progress: 1, total: 2, message: 'half', updates: 3 })).toBe(
      '    tool/progress c1 1/2 half "line" (+10 chars before)',
    );
  });
});
