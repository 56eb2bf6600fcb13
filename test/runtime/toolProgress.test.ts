/**
 * Issue 15.1: a tool body reports partial output or progress with `exec.progress(update)`. Each
 * update becomes part of a `tool/progress` event, coalesced per call on the injected clock (the
 * first at once, then at most one per interval), the last one always logged before the call's
 * result; progress never reaches the model's prompt and never holds up the ordered commit.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { LogEventSchema, type LogEvent, type LogEventOf } from '../../src/protocol/index.js';
import { ManualClock, flushMicrotasks, sleep } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool, type ExecContext } from '../../src/runtime/defineTool.js';
import { DEFAULT_PROGRESS_INTERVAL_MS, MAX_PROGRESS_OUTPUT_CHARS } from '../../src/runtime/pipeline/progress.js';
import { projectPrompt } from '../../src/runtime/projection/prompt.js';
import { settle } from './settle.js';

const progressOf = (events: readonly LogEvent[], callId?: string) =>
  events.filter((e): e is LogEventOf<'tool/progress'> => e.type === 'tool/progress' && (callId === undefined || e.callId === callId));

function valid(events: readonly LogEvent[]) {
  for (const e of events) expect(LogEventSchema.safeParse(e).success, `${e.type} #${e.seq}`).toBe(true);
}

describe('tool progress (issue 15.1)', () => {
  it('coalesces a burst into at most one event per interval on the injected clock; the first is logged at once', async () => {
    const clock = new ManualClock(1_000);
    const tool = defineTool({
      name: 'job',
      input: z.object({}),
      execute: async (_a, exec) => {
        for (let i = 1; i <= 10; i++) exec.progress({ output: `a${i} `, progress: i, total: 16, message: `step ${i}` });
        await sleep(clock, 100);
        for (let i = 11; i <= 15; i++) exec.progress({ output: `b${i} `, progress: i, total: 16 });
        await sleep(clock, 300);
        exec.progress({ output: 'c16', progress: 16, total: 16, message: 'last' });
        return 'done';
      },
    });
    const rt = createRuntime({ tools: [tool], clock });
    const result = rt.runCall({ callId: 'c1', toolName: 'job', input: '{}' }).result;
    await flushMicrotasks();
    expect(progressOf(rt.log.events())).toHaveLength(1); // the first update, at once
    await clock.advance(1_000);
    await result;
    const events = rt.log.events();
    valid(events);
    const progress = progressOf(events);
    expect(progress.map((e) => [e.time, e.updates])).toEqual([
      [1_000, 1],
      [1_000 + DEFAULT_PROGRESS_INTERVAL_MS, 14], // everything reported in between, merged
      [1_400, 1], // a full interval had passed: at once
    ]);
    expect(progress.map((e) => e.output).join('')).toBe(
      [...Array.from({ length: 10 }, (_, i) => `a${i + 1} `), ...Array.from({ length: 5 }, (_, i) => `b${i + 11} `), 'c16'].join(''),
    );
    // Status fields are the latest reported (a field not reported again keeps its last value).
    expect(progress[1]).toMatchObject({ progress: 15, total: 16, message: 'step 10' });
    expect(progress[2]).toMatchObject({ progress: 16, message: 'last', callId: 'c1', toolName: 'job' });
    expect(events.map((e) => e.type)).toEqual(['tool/call', 'tool/progress', 'tool/progress', 'tool/progress', 'tool/result']);
  });

  it('keeps the last update: what is pending when the body returns is logged before the result, without waiting for the interval', async () => {
    const clock = new ManualClock();
    const tool = defineTool({
      name: 'quick',
      input: z.object({}),
      execute: (_a, exec) => {
        exec.progress({ message: 'one' });
        exec.progress({ message: 'two' });
        exec.progress({ message: 'three' });
        return 'ok';
      },
    });
    const rt = createRuntime({ tools: [tool], clock });
    const r = await rt.runCall({ callId: 'q', toolName: 'quick', input: '{}' }).result;
    expect(r.isError).toBe(false);
    const events = rt.log.events();
    expect(events.map((e) => e.type)).toEqual(['tool/call', 'tool/progress', 'tool/progress', 'tool/result']);
    expect(progressOf(events).map((e) => [e.message, e.updates, e.time])).toEqual([
      ['one', 1, 0],
      ['three', 2, 0],
    ]);
    expect(clock.pending).toBe(0); // no coalescing timer left behind
  });

  it('ignores updates after the body settled, and after the call was cancelled (what was pending is logged first)', async () => {
    const clock = new ManualClock();
    let kept: ExecContext | undefined;
    const late = defineTool({
      name: 'late',
      input: z.object({}),
      execute: (_a, exec) => {
        kept = exec;
        return 'ok';
      },
    });
    const slow = defineTool({
      name: 'slow',
      input: z.object({}),
      execute: (_a, exec) =>
        new Promise((resolve) => {
          exec.progress({ output: 'first' });
          exec.progress({ output: 'second' });
          exec.signal.addEventListener('abort', () => {
            exec.progress({ output: 'after abort' });
            resolve('late value');
          });
        }),
    });
    const rt = createRuntime({ tools: [late, slow], clock });
    await rt.runCall({ callId: 'l', toolName: 'late', input: '{}' }).result;
    kept!.progress({ output: 'too late' });
    await clock.advance(1_000);
    expect(progressOf(rt.log.events(), 'l')).toEqual([]);

    const h = rt.runCall({ callId: 's', toolName: 'slow', input: '{}' });
    await flushMicrotasks();
    h.cancel('stop');
    const r = await h.result;
    expect(r.error?.code).toBe('ABORTED');
    const events = rt.log.events().filter((e) => 'callId' in e && e.callId === 's');
    expect(events.map((e) => e.type)).toEqual(['tool/call', 'tool/progress', 'tool/progress', 'tool/result']);
    expect(progressOf(events).map((e) => e.output)).toEqual(['first', 'second']);
  });

  it('bounds the output of one event (tail kept, the rest counted) and survives hostile updates', async () => {
    const clock = new ManualClock();
    const tool = defineTool({
      name: 'noisy',
      input: z.object({}),
      execute: (_a, exec) => {
        exec.progress({ output: 'x'.repeat(3 * MAX_PROGRESS_OUTPUT_CHARS) + 'END' });
        exec.progress(null as never);
        exec.progress({ progress: Number.NaN, total: Infinity, message: 'm'.repeat(10_000) });
        exec.progress(
          new Proxy({}, {
            get() {
              throw new Error('hostile getter');
            },
          }) as never,
        );
        return 'ok';
      },
    });
    const rt = createRuntime({ tools: [tool], clock });
    const r = await rt.runCall({ callId: 'n', toolName: 'noisy', input: '{}' }).result;
    expect(r.isError).toBe(false);
    const events = rt.log.events();
    valid(events);
    const [first, rest] = progressOf(events);
    expect(first!.output).toHaveLength(MAX_PROGRESS_OUTPUT_CHARS);
    expect(first!.output!.endsWith('END')).toBe(true);
    expect(first!.droppedChars).toBe(3 * MAX_PROGRESS_OUTPUT_CHARS + 3 - MAX_PROGRESS_OUTPUT_CHARS);
    expect(rest!.progress).toBeUndefined();
    expect(rest!.total).toBeUndefined();
    expect(rest!.message!.length).toBeLessThanOrEqual(500);
  });

  it('a body that reports once and returns: that one event, logged at once, and its result', async () => {
    const clock = new ManualClock();
    const tool = defineTool({ name: 'once', input: z.object({}), execute: (_a, exec) => (exec.progress({ message: 'started' }), 'done') });
    const rt = createRuntime({ tools: [tool], clock });
    const r = await rt.runCall({ callId: 'o', toolName: 'once', input: '{}' }).result;
    expect(r).toMatchObject({ isError: false, content: 'done' });
    expect(progressOf(rt.log.events()).map((e) => [e.message, e.updates])).toEqual([['started', 1]]);
  });

  it('an event holds only the fields reported (a field that is not text or a finite number is dropped, never logged as a key)', async () => {
    const clock = new ManualClock();
    const tool = defineTool({
      name: 'fields',
      input: z.object({}),
      execute: async (_a, exec) => {
        exec.progress({ message: 'm' });
        await sleep(clock, DEFAULT_PROGRESS_INTERVAL_MS);
        exec.progress({ progress: 2, total: 4 });
        await sleep(clock, DEFAULT_PROGRESS_INTERVAL_MS);
        exec.progress({ output: 'o' });
        await sleep(clock, DEFAULT_PROGRESS_INTERVAL_MS);
        exec.progress({ output: 42, message: 7, progress: '3', total: Number.NaN } as never);
        return 'ok';
      },
    });
    const rt = createRuntime({ tools: [tool], clock });
    const result = rt.runCall({ callId: 'f', toolName: 'fields', input: '{}' }).result;
    await clock.advance(3 * DEFAULT_PROGRESS_INTERVAL_MS);
    expect((await result).isError).toBe(false);
    const reported = (e: LogEventOf<'tool/progress'>) => Object.fromEntries(Object.entries(e).filter(([k]) => ['output', 'droppedChars', 'message', 'progress', 'total'].includes(k)));
    expect(progressOf(rt.log.events()).map(reported)).toStrictEqual([{ message: 'm' }, { progress: 2, total: 4 }, { output: 'o' }, {}]);
  });

  it('output cut within one interval is counted across its updates: the tail of everything, and all that was cut', async () => {
    const clock = new ManualClock();
    const tool = defineTool({
      name: 'spill',
      input: z.object({}),
      execute: (_a, exec) => {
        exec.progress({ output: 'first' }); // logged at once
        exec.progress({ output: 'a'.repeat(10) });
        exec.progress({ output: 'b'.repeat(MAX_PROGRESS_OUTPUT_CHARS + 900) });
        return 'ok';
      },
    });
    const rt = createRuntime({ tools: [tool], clock });
    await rt.runCall({ callId: 's', toolName: 'spill', input: '{}' }).result;
    const [, merged] = progressOf(rt.log.events());
    expect(merged!.output).toBe('b'.repeat(MAX_PROGRESS_OUTPUT_CHARS));
    expect(merged!.droppedChars).toBe(10 + 900);
    expect(merged!.updates).toBe(2);
  });

  it('in a turn: progress stays out of the prompt and leaves the commit order (and its timing) intact', async () => {
    const clock = new ManualClock();
    // `slow` (first in the batch) reports progress all along; `fast` finishes long before it.
    const work = defineTool({
      name: 'work',
      input: z.object({ id: z.string(), ms: z.number() }),
      isConcurrencySafe: () => true,
      execute: async ({ id, ms }, exec) => {
        for (let t = 0; t < ms; t += 10) {
          exec.progress({ output: `PROGRESS-${id}-${t} `, progress: t, total: ms });
          await sleep(clock, 10);
        }
        return `result of ${id}`;
      },
    });
    const rt = createRuntime({ tools: [work], clock });
    const model = scriptedModel(
      [
        {
          toolCalls: [
            { toolName: 'work', input: { id: 'slow', ms: 105 } },
            { toolName: 'work', input: { id: 'fast', ms: 20 } },
          ],
        },
        { text: 'both done' },
      ],
      { clock },
    );
    const turn = rt.startTurn({ model, input: 'work' });
    const out = await settle(clock, turn.done);
    expect(out.outcome).toBe('completed');
    const events = rt.log.events();
    valid(events);

    const results = events.filter((e): e is LogEventOf<'tool/result'> => e.type === 'tool/result');
    expect(results.map((e) => e.result.content)).toEqual(['result of slow', 'result of fast']); // the model's order
    const slowCall = events.find((e): e is LogEventOf<'tool/call'> => e.type === 'tool/call' && e.index === 0)!;
    const slowProgress = progressOf(events, slowCall.callId);
    // Coalesced: 11 updates over ~105 ms of fake time, at most one event per interval plus the first and the last.
    expect(slowProgress.length).toBeGreaterThanOrEqual(2);
    expect(slowProgress.length).toBeLessThanOrEqual(3);
    expect(slowProgress.reduce((n, e) => n + e.updates, 0)).toBe(11);
    // The last update is in the log before the result, and the result was committed as soon as the
    // body returned (not held for a coalescing interval).
    const slowResult = results[0]!;
    expect(slowProgress.at(-1)!.seq).toBeLessThan(slowResult.seq);
    expect(slowProgress.at(-1)!.output).toContain('PROGRESS-slow-100');
    expect(slowResult.time).toBe(slowProgress.at(-1)!.time);

    // The model's second request: exactly the projection of the log without the progress events.
    const prompt = model.calls[1]!.prompt;
    expect(JSON.stringify(prompt)).not.toContain('PROGRESS-');
    const withoutProgress = events.filter((e) => e.type !== 'tool/progress');
    expect(prompt).toEqual(projectPrompt(withoutProgress.filter((e) => e.seq < events.find((x) => x.type === 'step/start' && x.stepIndex === 1)!.seq + 1)));
  });
});
