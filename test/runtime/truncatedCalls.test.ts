/**
 * Issue 11.3 (SPEC §8.12, §8.14): a call whose arguments did not validate is planned by its tool's
 * mode as far as it can be known; an unknown or unprovable mode counts as exclusive, and its
 * `tool/call` logs that mode. So nothing from it onward starts before the model's finish, and under
 * `length` every call not yet started gets TRUNCATED_CALL.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { ErrorCode, type LogEvent, type LogEventOf } from '../../src/protocol/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { settle } from './settle.js';

function setup() {
  const clock = new ManualClock();
  const trace: string[] = [];
  const read = defineTool({
    name: 'read',
    input: z.object({ path: z.string() }),
    isConcurrencySafe: () => true,
    execute: async (a) => {
      trace.push(`read ${a.path}@${clock.now()}`);
      return `contents of ${a.path}`;
    },
  });
  const write = defineTool({
    name: 'write',
    input: z.object({ path: z.string(), text: z.string() }),
    execute: async (a) => {
      trace.push(`write ${a.path}@${clock.now()}`);
      return 'written';
    },
  });
  const rt = createRuntime({ tools: [read, write], clock });
  return { clock, trace, rt };
}

const of = <T extends LogEvent['type']>(events: readonly LogEvent[], type: T) => events.filter((e): e is LogEventOf<T> => e.type === type);
const codes = (events: readonly LogEvent[]) => of(events, 'tool/result').map((e) => e.result.error?.code ?? 'ok');

describe('invalid calls are planned conservatively (issue 11.3)', () => {
  it('cut off by length: an exclusive write whose JSON was cut mid-string and the safe read after it both get TRUNCATED_CALL; the read never runs', async () => {
    const { clock, trace, rt } = setup();
    const model = scriptedModel(
      [
        {
          toolCalls: [
            { toolName: 'write', input: '{"path":"out.txt","text":"half a senten' },
            { toolName: 'read', input: { path: 'after' } },
          ],
          finishReason: 'length',
        },
        { text: 'I will re-issue the calls.' },
      ],
      { clock, chunkDelayMs: 10 },
    );
    const out = await settle(clock, rt.startTurn({ model, input: 'go' }).done);
    expect(out.outcome).toBe('completed');
    const events = rt.log.events();
    expect(of(events, 'tool/call').map((e) => [e.toolName, e.executionMode])).toEqual([
      ['write', 'exclusive'],
      ['read', 'parallel'],
    ]);
    expect(codes(events)).toEqual([ErrorCode.TRUNCATED_CALL, ErrorCode.TRUNCATED_CALL]);
    expect(trace).toEqual([]);
  });

  it('an unknown tool is planned exclusive: a safe call after it waits for the finish (and then runs)', async () => {
    const { clock, trace, rt } = setup();
    const model = scriptedModel(
      [
        { toolCalls: [{ toolName: 'nope', input: {} }, { toolName: 'read', input: { path: 'x' } }, { toolName: 'read', input: { path: 'y' } }] },
        { text: 'done' },
      ],
      { clock, chunkDelayMs: 100 },
    );
    const out = await settle(clock, rt.startTurn({ model, input: 'go' }).done);
    expect(out.outcome).toBe('completed');
    const events = rt.log.events();
    expect(of(events, 'tool/call').map((e) => e.executionMode)).toEqual(['exclusive', 'parallel', 'parallel']);
    expect(codes(events)).toEqual([ErrorCode.UNKNOWN_TOOL, 'ok', 'ok']);
    // The reads ran only after the finish part arrived (each part is 100 ms apart, the finish last).
    const finishAt = events.find((e) => e.type === 'step/end')!.time;
    for (const t of trace) expect(Number(t.split('@')[1])).toBeGreaterThanOrEqual(finishAt - 1);
    expect(trace).toHaveLength(2);
  });

  it('a schema mismatch without truncation still answers INVALID_ARGS, logged exclusive; a lone runCall logs the same mode', async () => {
    const { clock, rt } = setup();
    const model = scriptedModel([{ toolCalls: [{ toolName: 'read', input: { path: 42 } }] }, { text: 'ok' }], { clock });
    await settle(clock, rt.startTurn({ model, input: 'go' }).done);
    const lone = await rt.runCall({ callId: 'lone', toolName: 'read', input: '{"path": 1}' }).result;
    expect(lone.error?.code).toBe(ErrorCode.INVALID_ARGS);
    const events = rt.log.events();
    expect(of(events, 'tool/call').map((e) => e.executionMode)).toEqual(['exclusive', 'exclusive']);
    expect(codes(events)).toEqual([ErrorCode.INVALID_ARGS, ErrorCode.INVALID_ARGS]);
  });
});
