// The page's model of a session at a point of its log, and the adapter from XState inspection
// to live actor states: what the inspector shows is what the log and the actors say.
import { describe, expect, it } from 'vitest';
import { createActor, createMachine } from 'xstate';
import type { InspectionEvent } from 'xstate';
import { actorStateOf, diagramStateOf } from '../../src/cli/inspect/actorStates.js';
import { inspectedSession } from '../../src/cli/inspect/inspectedSession.js';
import type { LiveFrame } from '../../src/protocol/wire.js';
import { highlightedStates, logRow, sessionAt } from '../../src/cli/inspect/page/model.js';
import { describeProvenance, type LogEvent } from '../../src/protocol/index.js';
import { createMemoryLog } from '../../src/runtime/log/sessionLog.js';

function session(): readonly LogEvent[] {
  const log = createMemoryLog();
  log.append({ type: 'turn/start', turnId: 't1', input: 'go' });
  log.append({ type: 'step/start', turnId: 't1', stepIndex: 0 });
  log.append({ type: 'tool/call', turnId: 't1', stepIndex: 0, callId: 'c0', toolName: 'bash', input: '{"command":"make"}', index: 0, executionMode: 'exclusive' });
  log.append({ type: 'tool/approval-request', turnId: 't1', stepIndex: 0, callId: 'c0', toolName: 'bash', reason: 'asks' });
  log.append({ type: 'tool/approval-answer', turnId: 't1', stepIndex: 0, callId: 'c0', answer: 'allowed-once' });
  log.append({
    type: 'tool/result',
    turnId: 't1',
    stepIndex: 0,
    callId: 'c0',
    toolName: 'bash',
    sourceEventSeqs: [3],
    result: { callId: 'c0', toolName: 'bash', isError: true, error: { code: 'TOOL_FAILED', message: 'exit 2' }, content: 'exit 2', metadata: { durationsMs: { validating: 1, preExecute: 0, awaitingApproval: 40, guard: 0, executing: 9, finalizing: 0, total: 50 } } },
  } as never);
  log.append({ type: 'step/end', turnId: 't1', stepIndex: 0, finishReason: 'tool-calls', toolCalls: 1 });
  log.append({ type: 'turn/end', turnId: 't1', outcome: 'completed', steps: 1 });
  return log.events();
}


describe('sessionAt', () => {
  it('follows a call through the log: called, waiting for an answer, running, settled with its stage timings', () => {
    const events = session();
    expect(sessionAt(events, 2).calls).toEqual([]);
    expect(sessionAt(events, 3).callById.get('c0')?.state).toBe('validating');
    expect(sessionAt(events, 4).callById.get('c0')?.state).toBe('awaitingApproval');
    expect(sessionAt(events, 5).callById.get('c0')?.state).toBe('executing');
    const settled = sessionAt(events, 6).callById.get('c0')!;
    expect(settled).toMatchObject({ state: 'settled', ok: false, error: { code: 'TOOL_FAILED' }, args: 'make', approval: { answer: 'allowed-once' } });
    expect(settled.durations).toEqual({ validating: 1, preExecute: 0, awaitingApproval: 40, guard: 0, executing: 9, finalizing: 0, total: 50 });
    const end = sessionAt(events, 99);
    expect(end.turns[0]).toMatchObject({ state: 'done', outcome: 'completed' });
    expect(end.steps.get('t1/0')).toMatchObject({ state: 'done', callIds: ['c0'] });
  });

  it("a call's decision (who denied it, and by which rule) is on the page's model as one line", () => {
    const log = createMemoryLog();
    log.append({ type: 'tool/call', turnId: 't1', stepIndex: 0, callId: 'c1', toolName: 'write', input: { path: '.env' }, index: 0, executionMode: 'exclusive' });
    log.append({
      type: 'tool/result',
      turnId: 't1',
      stepIndex: 0,
      callId: 'c1',
      toolName: 'write',
      sourceEventSeqs: [1],
      result: {
        callId: 'c1',
        toolName: 'write',
        isError: true,
        error: { name: 'PolicyDeniedError', code: 'POLICY_DENIED', message: 'denied by policy: no' },
        content: 'POLICY_DENIED: no',
        metadata: {},
        decision: { stage: 'pre-execute', outcome: 'deny', by: 'dsh:permissions', rule: 'permissions[0] (tool "write", path ".env")' },
      },
    });
    const decision = { stage: 'pre-execute', outcome: 'deny', by: 'dsh:permissions', rule: 'permissions[0] (tool "write", path ".env")' } as const;
    expect(sessionAt(log.events(), 99).callById.get('c1')?.decidedBy).toBe('pre-execute deny by dsh:permissions (permissions[0] (tool "write", path ".env"))');
    expect(sessionAt(log.events(), 99).callById.get('c1')?.decidedBy).toBe(describeProvenance(decision)); // the page's copy says the same
  });

  it('log rows name their actor and what to read first (code, outcome, answer)', () => {
    const rows = session().map(logRow);
    expect(rows[2]).toMatchObject({ seq: 3, type: 'tool/call', callId: 'c0', actor: { kind: 'call', key: 'c0' }, text: 'bash make' });
    expect(rows[4]).toMatchObject({ code: 'allowed-once' });
    expect(rows[5]).toMatchObject({ code: 'TOOL_FAILED' });
    expect(rows[6]).toMatchObject({ actor: { kind: 'step', key: 't1/0' } });
    expect(rows[7]).toMatchObject({ actor: { kind: 'turn', key: 't1' }, code: 'completed' });
  });

  it('highlights a nested state with its parents (generic: the toolCall machine itself is flat)', () => {
    expect(highlightedStates('executing_running')).toEqual(['executing', 'executing_running']);
    expect(diagramStateOf({ executing: 'running' })).toBe('executing_running');
  });
});

describe('actorStateOf and the live actor frames', () => {
  it('names a toolCall actor by the callId in its input, not by its (reused) actor id; only changes are news', () => {
    const machine = createMachine({
      id: 'toolCall',
      context: ({ input }: { input: { callId: string } }) => ({ request: { callId: input.callId, toolName: 'read', input: '{}' } }),
      initial: 'awaitingApproval',
      states: { awaitingApproval: { on: { GO: 'executing' } }, executing: { initial: 'running', states: { running: { on: { NOTE: {} } } }, on: { DONE: 'settled' } }, settled: { type: 'final' } },
    });
    const inspected = inspectedSession({ id: 's', log: createMemoryLog(), live: true });
    const seen: LiveFrame[] = [];
    inspected.session.onLive((f) => seen.push(f));
    const inspect = (ev: InspectionEvent) => {
      const a = actorStateOf(ev, 0);
      if (a) inspected.actor(a);
    };
    const actor = createActor(machine, { id: 'call-0', input: { callId: 'call-7-3' }, inspect }).start();
    actor.send({ type: 'GO' });
    actor.send({ type: 'NOTE' });
    actor.send({ type: 'DONE' });
    expect(seen.map((f) => (f.type === 'actor' ? `${f.kind}:${f.key}=${f.state}` : f.type))).toEqual(['call:call-7-3=awaitingApproval', 'call:call-7-3=executing_running', 'call:call-7-3=settled']);
    // A page that connects now gets each actor's latest state.
    expect(inspected.session.liveState().filter((f) => f.type === 'actor')).toEqual([expect.objectContaining({ kind: 'call', key: 'call-7-3', state: 'settled' })]);
    expect(actorStateOf({ type: '@xstate.event' } as InspectionEvent, 0)).toBeUndefined();
  });
});

describe('tool progress on the page (issue 15.1)', () => {
  it('a running call shows its latest tool/progress as one line; the log row reads the same; steers and suspensions have rows', () => {
    const log = createMemoryLog();
    log.append({ type: 'turn/start', turnId: 't1', input: 'go' });
    log.append({ type: 'step/start', turnId: 't1', stepIndex: 0 });
    log.append({ type: 'tool/call', turnId: 't1', stepIndex: 0, callId: 'c0', toolName: 'bash', input: '{"command":"make"}', index: 0, executionMode: 'exclusive' });
    log.append({ type: 'tool/progress', turnId: 't1', stepIndex: 0, callId: 'c0', toolName: 'bash', output: 'cc a.c\ncc b.c\n', updates: 2 });
    log.append({ type: 'tool/progress', turnId: 't1', stepIndex: 0, callId: 'c0', toolName: 'bash', output: 'cc c.c\n', message: 'compiling', progress: 3, total: 10, updates: 1 });
    log.append({ type: 'user/steer', turnId: 't1', stepIndex: 1, text: 'also run the tests' });
    const events = log.events();
    expect(sessionAt(events, 4).callById.get('c0')?.progress?.text).toBe('cc b.c');
    expect(sessionAt(events, 5).callById.get('c0')?.progress).toEqual({ seq: 5, text: '3/10 compiling · cc c.c' });
    expect(logRow(events[4]!)).toMatchObject({ type: 'tool/progress', callId: 'c0', text: '3/10 compiling · cc c.c' });
    expect(logRow(events[5]!)).toMatchObject({ type: 'user/steer', text: 'also run the tests', actor: { kind: 'step', key: 't1/1' } });
  });
});

describe('the stage stream on the inspector page (issue 13.1: the UIs use it)', () => {
  it('every stage a real call enters reaches the page over the wire, the synchronous ones (validating, guard) included', async () => {
    const { createRuntime } = await import('../../src/runtime/createRuntime.js');
    const { defineTool } = await import('../../src/runtime/defineTool.js');
    const { startRunInspector } = await import('../../src/cli/inspect/runInspector.js');
    const { z } = await import('zod');
    const echo = defineTool({ name: 'echo', input: z.object({ text: z.string() }), execute: ({ text }) => text });
    const rt = createRuntime({ tools: [echo] });
    rt.tools.guard(() => undefined, 'noop');
    const inspector = await startRunInspector('run-1');
    try {
      inspector.hooks.attach(rt.log);
      rt.onStage((e) => inspector.hooks.stage(e));
      const url = new URL(inspector.url);
      const stream = await fetch(`${url.origin}/api/sessions/run-1/events?token=${url.searchParams.get('t')}`);
      const reader = stream.body!.getReader();
      let text = '';
      const readUntil = async (re: RegExp) => {
        while (!re.test(text)) text += new TextDecoder().decode((await reader.read()).value);
      };
      await readUntil(/"type":"session"/);
      await rt.runCall({ callId: 'c1', toolName: 'echo', input: '{"text":"hi"}' }).result;
      await readUntil(/"state":"finalizing"/);
      await reader.cancel();
      const states = [...text.matchAll(/^data: (\{"type":"actor".*)$/gm)].map((m) => JSON.parse(m[1]!) as { key: string; state: string }).filter((a) => a.key === 'c1').map((a) => a.state);
      expect(states[0]).toBe('validating');
      expect(states).toContain('guard');
      expect(states).toContain('executing');
      expect(states.at(-1)).toBe('finalizing');
    } finally {
      await inspector.close();
    }
  });
});
