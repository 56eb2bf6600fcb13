/**
 * Issue 15.4, the edges: the approval timeout still applies after a resume (an option, not the only
 * way out); a resumed turn cancelled before its answer ends well-formed; `suspend` outside a turn is
 * denied; while a turn is suspended no other turn starts (a queued one does not begin, nothing is
 * logged), so the suspended turn stays resumable.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../../src/adapters/model/index.js';
import { ErrorCode, LogEventSchema, type LogEvent } from '../../../src/protocol/index.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import { createMemoryLog } from '../../../src/runtime/log/sessionLog.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { suspendingApproval, type ApprovalService } from '../../../src/runtime/pipeline/approvalService.js';
import { settle } from '../settle.js';

const ran: string[] = [];
const run = defineTool({
  name: 'run',
  input: z.object({ cmd: z.string() }),
  execute: async (a) => (ran.push(a.cmd), `ran ${a.cmd}`),
});

function runtimeOn(events: readonly LogEvent[], approval: ApprovalService, clock?: ManualClock) {
  const log = createMemoryLog({ initial: events.map((e) => structuredClone(e)), ...(clock ? { clock } : {}) });
  const rt = createRuntime({ log, tools: [run], approval, ...(clock ? { clock } : {}) });
  rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask' }));
  return rt;
}

async function suspendedLog(): Promise<readonly LogEvent[]> {
  const rt = runtimeOn([], suspendingApproval);
  const r = await rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'run', input: { cmd: 'make' }, toolCallId: 'k1' }] }]), input: 'x' }).done;
  expect(r.outcome).toBe('suspended');
  return rt.log.events();
}

const never: ApprovalService = { request: () => new Promise(() => {}) };

function expectWellFormed(events: readonly LogEvent[]) {
  events.forEach((e, i) => (expect(e.seq).toBe(i + 1), LogEventSchema.parse(e)));
  for (const c of events.filter((e) => e.type === 'tool/call')) {
    expect(events.filter((e) => e.type === 'tool/result' && e.sourceEventSeqs.includes(c.seq))).toHaveLength(1);
  }
  expect(events.filter((e) => e.type === 'turn/end')).toHaveLength(events.filter((e) => e.type === 'turn/start').length);
}

describe('suspended approvals: edges (issue 15.4)', () => {
  it('after a resume the approval timeout still denies an unanswered question', async () => {
    const clock = new ManualClock();
    const rt = runtimeOn(await suspendedLog(), never, clock);
    const r = await settle(clock, rt.resumeTurn({ model: scriptedModel([{ text: 'fine' }]) }).done);
    expect(r.outcome).toBe('completed');
    const events = rt.log.events();
    expect(events.filter((e) => e.type === 'tool/approval-answer')).toMatchObject([{ callId: 'k1', answer: 'timeout' }]);
    expect(events.find((e) => e.type === 'tool/result')).toMatchObject({ result: { error: { code: ErrorCode.APPROVAL_DENIED } } });
    expectWellFormed(events);
  });

  it('a resumed turn cancelled before the answer: the call ends ABORTED_BEFORE_DISPATCH, the turn cancelled', async () => {
    ran.length = 0;
    const rt = runtimeOn(await suspendedLog(), never);
    const model = scriptedModel([]);
    const handle = rt.resumeTurn({ model });
    await new Promise((r) => setTimeout(r, 10));
    handle.cancel('changed my mind');
    const r = await handle.done;
    expect(r.outcome).toBe('cancelled');
    expect(model.calls).toHaveLength(0);
    expect(ran).toEqual([]);
    const events = rt.log.events();
    expect(events.find((e) => e.type === 'tool/result')).toMatchObject({ result: { error: { code: ErrorCode.ABORTED_BEFORE_DISPATCH } } });
    expectWellFormed(events);
    expect(rt.pendingSuspension()).toBeUndefined();
  });

  it('a question suspended again after a resume in the same process suspends again (the first parking was released)', async () => {
    const rt = runtimeOn([], suspendingApproval);
    const first = await rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'run', input: { cmd: 'make' }, toolCallId: 'k1' }] }]), input: 'x' }).done;
    expect(first.outcome).toBe('suspended');
    const again = await rt.resumeTurn({ model: scriptedModel([{ text: 'fine' }]) }).done;
    expect(again.outcome).toBe('suspended');
    const events = rt.log.events();
    expect(events.filter((e) => e.type === 'warning')).toEqual([]);
    expect(events.filter((e) => e.type === 'turn/suspended')).toHaveLength(2);
  });

  it('`suspend` for a call outside a turn is denied with a warning', async () => {
    const rt = runtimeOn([], suspendingApproval);
    const r = await rt.runCall({ callId: 'solo', toolName: 'run', input: { cmd: 'x' } }).result;
    expect(r.error?.code).toBe(ErrorCode.APPROVAL_DENIED);
    expect(rt.log.events().find((e) => e.type === 'warning')).toMatchObject({ code: 'APPROVAL_SUSPEND_UNAVAILABLE' });
  });

  it('no turn starts while one is suspended: startTurn throws, a queued turn does not begin', async () => {
    const rt = runtimeOn([], suspendingApproval);
    const first = rt.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'run', input: { cmd: 'make' }, toolCallId: 'q1' }] }]), input: 'one' });
    const queuedModel = scriptedModel([{ text: 'two' }]);
    const queued = rt.startTurn({ model: queuedModel, input: 'two' });
    expect((await first.done).outcome).toBe('suspended');
    expect(await queued.done).toMatchObject({ outcome: 'cancelled', steps: 0, error: expect.stringMatching(/suspended turn/) });
    expect(queuedModel.calls).toHaveLength(0);
    expect(rt.log.events().filter((e) => e.type === 'turn/start')).toHaveLength(1);
    expect(rt.log.events().at(-1)?.type).toBe('turn/suspended');
    expect(() => rt.startTurn({ model: queuedModel, input: 'three' })).toThrow(/suspended turn/);
    expect(() => createRuntime().resumeTurn({ model: queuedModel })).toThrow(/no suspended turn/);
  });
});

describe('a parked question that ends while the step still runs (issue 15.4)', () => {
  it('releases the turn: its approval timeout denies the call, the turn is running again (not suspending) and completes', async () => {
    const clock = new ManualClock();
    let finish!: (v: string) => void;
    const slow = defineTool({ name: 'slow', input: z.object({}), isConcurrencySafe: () => true, execute: () => new Promise<string>((r) => (finish = r)) });
    const asked = defineTool({ name: 'asked', input: z.object({}), isConcurrencySafe: () => true, execute: () => 'never runs' });
    const rt = createRuntime({ tools: [slow, asked], approval: suspendingApproval, clock, limits: { approvalTimeoutMs: 100 } });
    rt.hooks.on('tools/pre-execute', 'ask', (call) => (call.toolName === 'asked' ? { kind: 'ask' } : undefined));
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'slow', input: {}, toolCallId: 's1' }, { toolName: 'asked', input: {}, toolCallId: 'a1' }] },
      { text: 'done' },
    ]);
    const h = rt.startTurn({ model, input: 'x' });
    await clock.advance(0);
    expect(h.lifecycle.getSnapshot().matches({ live: 'suspending' })).toBe(true); // a1 parked, s1 still running
    await clock.advance(100);
    expect(rt.log.events().filter((e) => e.type === 'tool/approval-answer')).toMatchObject([{ callId: 'a1', answer: 'timeout' }]);
    expect(h.lifecycle.getSnapshot().matches({ live: 'running' })).toBe(true);
    finish('finished');
    const r = await settle(clock, h.done);
    expect(r.outcome).toBe('completed');
    expectWellFormed(rt.log.events());
  });
});
