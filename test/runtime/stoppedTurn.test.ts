/**
 * A turn actor stopped from outside (as a suspended turn is) leaves nothing running: its call
 * actors are not XState children of the scheduler, so the scheduler stops them itself. Found when a
 * suspended `dsh run --suspend` process never exited: a stopped turn's call kept its approval
 * timeout (300 s) alive.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';

describe('a turn stopped while a call waits for approval', () => {
  it('stops the call: its approval is withdrawn and no timer of it is left', async () => {
    const clock = new ManualClock();
    let withdrawn = false;
    const rt = createRuntime({
      clock,
      tools: [defineTool({ name: 'run', input: z.object({}), execute: () => 'ran' })],
      approval: {
        request: (_req, signal) =>
          new Promise(() => {
            signal.addEventListener('abort', () => (withdrawn = true), { once: true });
          }),
      },
    });
    rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask', reason: 'asks' }));
    const turn = rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'run', input: {} }] }]), input: 'go' });
    for (let i = 0; i < 50 && !rt.log.events().some((e) => e.type === 'tool/approval-request'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(rt.log.events().some((e) => e.type === 'tool/approval-request')).toBe(true);
    expect(clock.pending).toBeGreaterThan(0); // the approval timeout
    turn.actor.stop();
    await new Promise((r) => setTimeout(r, 20));
    expect(withdrawn).toBe(true);
    expect(clock.pending).toBe(0);
  });
});

describe('a turn stopped while a call runs', () => {
  it('aborts the body and leaves no timer of the call (its per-call deadline is disarmed)', async () => {
    const clock = new ManualClock();
    let signal: AbortSignal | undefined;
    const rt = createRuntime({
      clock,
      tools: [
        defineTool({
          name: 'hang',
          input: z.object({}),
          execute: (_args, exec) => {
            signal = exec.signal;
            return new Promise(() => {});
          },
        }),
      ],
    });
    const turn = rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'hang', input: {} }] }]), input: 'go' });
    for (let i = 0; i < 50 && !signal; i++) await new Promise((r) => setTimeout(r, 10));
    expect(signal).toBeDefined();
    expect(clock.pending).toBeGreaterThan(0); // the per-call deadline
    turn.actor.stop();
    await new Promise((r) => setTimeout(r, 20));
    expect(signal!.aborted).toBe(true);
    expect(clock.pending).toBe(0);
  });
});
