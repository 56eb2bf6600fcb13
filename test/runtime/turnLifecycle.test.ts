/**
 * SPEC §9.5 through the runtime: every state a person waits on is a state of `turn.lifecycle`
 * (machines/turnLifecycle.ts) and its steering child, with the names a view shows: queued behind a
 * running turn, running, a steer waiting for the next request, suspending while another call of the
 * step still runs, suspended, cancelling, ended with the outcome.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/index.js';
import type { ApprovalAnswer } from '../../src/protocol/index.js';
import type { DshInspectionEvent } from '../../src/runtime/inspection/inspectionEvents.js';
import { flushMicrotasks } from '../../src/runtime/clock.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import type { ApprovalService, SUSPEND } from '../../src/runtime/pipeline/approvalService.js';
import type { TurnHandle } from '../../src/runtime/turns.js';

/** A tool whose bodies the test finishes by hand. */
function heldTool(name: string, safe: boolean) {
  const finish: Array<() => void> = [];
  const tool = defineTool({
    name,
    input: z.object({}),
    isConcurrencySafe: () => safe,
    execute: (_a, exec) =>
      new Promise<string>((resolve, reject) => {
        finish.push(() => resolve(`${name} done`));
        exec.signal.addEventListener('abort', () => reject(exec.signal.reason), { once: true });
      }),
  });
  return { tool, finish };
}

const stateOf = (t: TurnHandle) => t.lifecycle.getSnapshot().value;
const steeringOf = (t: TurnHandle) => t.lifecycle.getSnapshot().children.steering?.getSnapshot().value;

async function until(cond: () => boolean) {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).toBe(true);
}

describe('the lifecycle of a turn, as a person sees it (SPEC §9.5)', () => {
  it('queued behind a running turn, running, a steer waiting, ended with its outcome', async () => {
    const slow = heldTool('slow', false);
    const rt = createRuntime({ tools: [slow.tool] });
    const first = rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'slow', input: {} }] }, { text: 'one' }]), input: 'one' });
    const second = rt.startTurn({ model: scriptedModel([{ text: 'two' }]), input: 'two' });
    await until(() => slow.finish.length === 1);
    expect(stateOf(first)).toEqual({ live: 'running' });
    expect(stateOf(second)).toBe('queued');
    expect(steeringOf(first)).toBe('idle');
    const steered = first.steer('and be brief');
    expect(steeringOf(first)).toBe('waiting');
    expect(steeringOf(second)).toBe('idle');
    slow.finish[0]!();
    expect(await steered).toMatchObject({ delivered: 'steer', stepIndex: 1 });
    expect((await first.done).outcome).toBe('completed');
    expect(stateOf(first)).toBe('ended');
    expect(first.lifecycle.getSnapshot().context.outcome).toBe('completed');
    expect(steeringOf(first)).toEqual({ closed: 'idle' });
    await second.done;
    expect(stateOf(second)).toBe('ended');
  });

  it('suspending while another call of the step still runs, then suspended; a steer then is logged for the next step', async () => {
    const slow = heldTool('slow', true);
    const answers: Array<(a: ApprovalAnswer | typeof SUSPEND) => void> = [];
    const approval: ApprovalService = { request: () => new Promise((r) => answers.push(r)) };
    const ask = defineTool({ name: 'ask', input: z.object({}), isConcurrencySafe: () => true, execute: () => 'asked' });
    const rt = createRuntime({ tools: [slow.tool, ask], approval });
    rt.hooks.on('tools/pre-execute', 'ask', (c, next) => (c.toolName === 'ask' ? { kind: 'ask', reason: 'may I?' } : next()));
    const turn = rt.startTurn({
      model: scriptedModel([{ toolCalls: [{ toolName: 'slow', input: {} }, { toolName: 'ask', input: {} }] }]),
      input: 'go',
    });
    await until(() => answers.length === 1 && slow.finish.length === 1);
    answers[0]!('suspend');
    await flushMicrotasks();
    // The other call still runs: the step is not quiet yet.
    expect(stateOf(turn)).toEqual({ live: 'suspending' });
    slow.finish[0]!();
    expect((await turn.done).outcome).toBe('suspended');
    expect(stateOf(turn)).toBe('suspended');
    expect(turn.actor.getSnapshot().status).toBe('stopped');
    expect(await turn.steer('later')).toMatchObject({ delivered: 'steer', stepIndex: 1 });
    expect(steeringOf(turn)).toBe('suspended');
  });

  it('cancelling while a call settles, then ended cancelled; a queued turn cancelled before its turn ends cancelled', async () => {
    const slow = heldTool('slow', false);
    const rt = createRuntime({ tools: [slow.tool] });
    const first = rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'slow', input: {} }] }]), input: 'one' });
    const second = rt.startTurn({ model: scriptedModel([{ text: 'two' }]), input: 'two' });
    await until(() => slow.finish.length === 1);
    second.cancel('not needed');
    expect(stateOf(second)).toBe('queued');
    first.cancel('stop');
    expect(stateOf(first)).toEqual({ live: 'cancelling' });
    expect((await first.done).outcome).toBe('cancelled');
    expect((await second.done).outcome).toBe('cancelled');
    expect(second.lifecycle.getSnapshot().context.outcome).toBe('cancelled');
  });

  it("a cancel carries its reason: a running body's signal is aborted with it (SPEC §2.3: a cancel always reaches the body)", async () => {
    const reasons: unknown[] = [];
    const watch = defineTool({
      name: 'watch',
      input: z.object({}),
      execute: (_a, exec) =>
        new Promise<string>((_resolve, reject) => {
          exec.signal.addEventListener('abort', () => (reasons.push(exec.signal.reason), reject(exec.signal.reason)), { once: true });
        }),
    });
    const rt = createRuntime({ tools: [watch] });
    const turn = rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'watch', input: {} }] }]), input: 'go' });
    await until(() => rt.log.events().some((e) => e.type === 'tool/call'));
    await flushMicrotasks();
    turn.cancel('the user pressed stop');
    expect((await turn.done).outcome).toBe('cancelled');
    expect(reasons).toEqual(['the user pressed stop']);
  });

  it('a cancel while queued is applied with its reason when the turn comes (the turn actor is told it, as an inspector sees)', async () => {
    const slow = heldTool('slow', false);
    const rt = createRuntime({ tools: [slow.tool] });
    const first = rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'slow', input: {} }] }, { text: 'one' }]), input: 'one' });
    const told: unknown[] = [];
    const inspect = (ev: DshInspectionEvent) => {
      if (ev.type === '@xstate.event' && ev.actorRef === second.actor && ev.event.type === 'CANCEL') told.push(ev.event);
    };
    const second = rt.startTurn({ model: scriptedModel([{ text: 'two' }]), input: 'two', inspect });
    await until(() => slow.finish.length === 1);
    second.cancel('not needed');
    slow.finish[0]!();
    expect((await first.done).outcome).toBe('completed');
    expect((await second.done).outcome).toBe('cancelled');
    expect(told).toEqual([{ type: 'CANCEL', reason: 'not needed' }]);
  });

  it.each([
    { room: false, path: ['queued', { live: 'cancelling' }, 'ended'] },
    { room: true, path: ['queued', 'preparing', { live: 'cancelling' }, 'ended'] },
  ])('a turn cancelled while queued goes from queued to cancelling when its turn comes, never running (room made first: $room)', async ({ room, path }) => {
    const slow = heldTool('slow', false);
    const rt = createRuntime({ tools: [slow.tool], ...(room ? { contextWindow: { maxChars: 20_000 } } : {}) });
    const first = rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'slow', input: {} }] }, { text: 'one' }]), input: 'one' });
    const model = scriptedModel([{ text: 'two' }]);
    const second = rt.startTurn({ model, input: 'two' });
    const seen: unknown[] = [second.lifecycle.getSnapshot().value];
    second.lifecycle.subscribe((s) => {
      if (JSON.stringify(seen.at(-1)) === JSON.stringify(s.value)) return;
      seen.push(s.value);
      // Cancelled while room is made for it.
      if (s.value === 'preparing') second.cancel('not needed');
    });
    await until(() => slow.finish.length === 1);
    if (!room) second.cancel('not needed');
    slow.finish[0]!();
    expect((await second.done).outcome).toBe('cancelled');
    expect(model.calls).toHaveLength(0);
    expect(seen).toEqual(path);
  });
});
