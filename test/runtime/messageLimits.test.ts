/**
 * Issue 24 item 6: how big a prompt, follow-up or steer may be (src/runtime/messageLimits.ts).
 * Past `maxMessageBytes` the API refuses with a `MessageLimitError` and nothing is logged; steers
 * waiting for the next model request are bounded together (count and bytes), so memory for many
 * pending steers is bounded; once delivered, steering goes on. Expected sizes are UTF-8 bytes.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { DEFAULT_MESSAGE_LIMITS, MessageLimitError, utf8Bytes } from '../../src/runtime/messageLimits.js';

/** A runtime whose one tool waits until `open()` is called: a turn stays in its first step meanwhile. */
function gated(limits?: { maxMessageBytes?: number; maxPendingSteers?: number }) {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const wait = defineTool({
    name: 'wait',
    input: z.object({}),
    execute: async () => {
      started();
      await gate;
      return 'waited';
    },
  });
  const rt = createRuntime({ tools: [wait], ...(limits ? { messageLimits: limits } : {}) });
  const model = () => scriptedModel([{ toolCalls: [{ toolName: 'wait', input: {} }] }, { text: 'done' }]);
  return { rt, model, open, running };
}

const refusal = (f: () => unknown): MessageLimitError => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(MessageLimitError);
    return e as MessageLimitError;
  }
  throw new Error('not refused');
};

describe('message size limits', () => {
  it('counts UTF-8 bytes, not UTF-16 units', () => {
    expect(utf8Bytes('abc')).toBe(3);
    expect(utf8Bytes('é')).toBe(2);
    expect(utf8Bytes('€')).toBe(3);
    expect(utf8Bytes('😀')).toBe(4);
    expect(utf8Bytes('\ud800')).toBe(3); // a lone surrogate is sent as U+FFFD
    expect(DEFAULT_MESSAGE_LIMITS).toEqual({ maxMessageBytes: 1 << 20, maxPendingSteers: 100 });
  });

  it('a prompt over the default 1 MiB is refused at startTurn; nothing is logged; one at the limit runs', async () => {
    const { rt, model, open } = gated();
    const e = refusal(() => rt.startTurn({ model: model(), input: 'x'.repeat((1 << 20) + 1) }));
    expect(e.code).toBe('MESSAGE_TOO_LARGE');
    expect(e.message).toMatch(/^MESSAGE_TOO_LARGE: the prompt is 1\.0 MiB, over the 1 MiB a message may be \(maxMessageBytes\); nothing was logged or sent$/);
    expect(rt.log.events()).toEqual([]);
    open();
    const ok = rt.startTurn({ model: model(), input: 'x'.repeat(1 << 20) });
    expect((await ok.done).outcome).toBe('completed');
  });

  it('configurable: 1 KiB; 400 euro signs (400 UTF-16 units, 1200 bytes) are over it; a follow-up too', async () => {
    const { rt, model, open } = gated({ maxMessageBytes: 1024 });
    expect(refusal(() => rt.startTurn({ model: model(), input: '€'.repeat(400) })).code).toBe('MESSAGE_TOO_LARGE');
    expect(refusal(() => rt.followUp('€'.repeat(400), { model: model() })).message).toMatch(/the follow-up is 1\.2 KiB, over the 1 KiB/);
    expect(rt.log.events()).toEqual([]);
    open();
    expect((await rt.startTurn({ model: model(), input: '€'.repeat(300) }).done).outcome).toBe('completed');
  });

  it('a steer over the limit is refused and not logged; the turn goes on and a small steer is delivered', async () => {
    const { rt, model, open, running } = gated({ maxMessageBytes: 1024 });
    const turn = rt.startTurn({ model: model(), input: 'go' });
    await running;
    expect(refusal(() => turn.steer('y'.repeat(1025))).code).toBe('MESSAGE_TOO_LARGE');
    const steered = turn.steer('small');
    open();
    expect((await turn.done).outcome).toBe('completed');
    expect(await steered).toMatchObject({ delivered: 'steer' });
    const steers = rt.log.events().filter((e) => e.type === 'user/steer');
    expect(steers.map((e) => (e.type === 'user/steer' ? e.text : ''))).toEqual(['small']);
  });

  it('10,000 steers into one turn: at most maxPendingSteers wait (the rest refused STEERS_PENDING, nothing logged); after delivery steering goes on', async () => {
    const { rt, open, running } = gated({ maxPendingSteers: 100 });
    const turn = rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'wait', input: {} }] }, { toolCalls: [{ toolName: 'wait', input: {} }] }, { text: 'done' }]), input: 'go' });
    await running;
    const accepted: Array<Promise<unknown>> = [];
    let refused = 0;
    for (let i = 0; i < 10_000; i++) {
      try {
        accepted.push(turn.steer(`steer ${i}`));
      } catch (e) {
        expect((e as MessageLimitError).code).toBe('STEERS_PENDING');
        refused++;
      }
    }
    expect(accepted).toHaveLength(100);
    expect(refused).toBe(9_900);
    open();
    await Promise.all(accepted);
    // Delivered: the next step's request carries them; the bound is free again for this step.
    const more = turn.steer('after delivery');
    expect((await turn.done).outcome).toBe('completed');
    expect(await more).toMatchObject({ delivered: 'steer' });
    expect(rt.log.events().filter((e) => e.type === 'user/steer')).toHaveLength(101);
  });

  it('waiting steers together are bounded by maxMessageBytes (they enter one request)', async () => {
    const { rt, model, open, running } = gated({ maxMessageBytes: 4096 });
    const turn = rt.startTurn({ model: model(), input: 'go' });
    await running;
    const a = turn.steer('a'.repeat(3000));
    const e = refusal(() => turn.steer('b'.repeat(2000)));
    expect(e.code).toBe('STEERS_PENDING');
    expect(e.message).toMatch(/would be 4\.9 KiB together, over the 4 KiB one request may carry/);
    open();
    expect((await turn.done).outcome).toBe('completed');
    await a;
    expect(rt.log.events().filter((x) => x.type === 'user/steer')).toHaveLength(1);
  });
});
