/**
 * Issue 15.4, in one process with two runtimes that share nothing but the log's events (the
 * cross-process tests in crossProcess.test.ts do the same with real processes): a turn suspended on
 * an approval is resumed by a second runtime built on a copy of the log, and its answer continues
 * the same call. The model is not asked again; calls before keep their results; calls after run as
 * planned, commit in order; an `allowed-always` is remembered; a crash closes what a suspension
 * does not.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../../src/adapters/model/index.js';
import { ErrorCode, LogEventSchema, type ApprovalAnswer, type LogEvent } from '../../../src/protocol/index.js';
import { createMemoryLog } from '../../../src/runtime/log/sessionLog.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { closeOpenWork } from '../../../src/runtime/openWork.js';
import { suspendingApproval, type ApprovalService } from '../../../src/runtime/pipeline/approvalService.js';

/** Bodies run, in order, across both runtimes (what a user would see happen in the world). */
function toolsRecording(ran: string[]) {
  const read = defineTool({
    name: 'read',
    input: z.object({ path: z.string() }),
    isConcurrencySafe: () => true,
    execute: async (a) => {
      ran.push(`read ${a.path}`);
      return `contents of ${a.path}`;
    },
  });
  const run = defineTool({
    name: 'run',
    input: z.object({ cmd: z.string() }),
    execute: async (a) => {
      ran.push(`run ${a.cmd}`);
      return `ran ${a.cmd}`;
    },
  });
  const peek = defineTool({
    name: 'peek',
    input: z.object({ what: z.string() }),
    isConcurrencySafe: () => true,
    execute: async (a) => {
      ran.push(`peek ${a.what}`);
      return `peeked ${a.what}`;
    },
  });
  return [read, run, peek];
}

/** A runtime whose policy asks before `run` and `peek`. */
function runtimeOn(events: readonly LogEvent[], ran: string[], approval: ApprovalService, concurrency = 8) {
  const log = createMemoryLog({ initial: events.map((e) => structuredClone(e)) });
  const rt = createRuntime({ log, tools: toolsRecording(ran), approval, concurrency });
  rt.hooks.on('tools/pre-execute', 'ask', (call, next) => (call.toolName === 'run' || call.toolName === 'peek' ? { kind: 'ask', reason: `may I ${call.toolName}?` } : next()));
  return rt;
}

/** Answers with `answer`, recording each question. */
function answering(answer: ApprovalAnswer, asked: string[]): ApprovalService {
  return {
    request: async (req) => {
      asked.push(`${req.toolName} ${JSON.stringify(req.args)}`);
      return answer;
    },
  };
}

/** The log is one valid session: seq 1..n, every event valid, each tool/call has exactly one tool/result. */
function expectValidSession(events: readonly LogEvent[]) {
  events.forEach((e, i) => {
    expect(e.seq).toBe(i + 1);
    LogEventSchema.parse(e);
  });
  const calls = events.filter((e) => e.type === 'tool/call');
  for (const c of calls) {
    const results = events.filter((e) => e.type === 'tool/result' && e.sourceEventSeqs.includes(c.seq));
    expect(results, `results of ${c.type === 'tool/call' ? c.callId : ''}`).toHaveLength(1);
  }
  const types = events.map((e) => e.type);
  expect(types.filter((t) => t === 'turn/start').length).toBe(types.filter((t) => t === 'turn/end').length);
  expect(types.filter((t) => t === 'step/start').length).toBe(types.filter((t) => t === 'step/end').length);
}

const results = (events: readonly LogEvent[]) =>
  events.flatMap((e) => (e.type === 'tool/result' ? [`${e.callId}:${e.result.isError ? e.result.error?.code : 'ok'}`] : []));

describe('approvals that outlive the process (issue 15.4)', () => {
  it('an exclusive call suspends the turn; a second runtime answers allowed-always and finishes the same turn', async () => {
    const ran: string[] = [];
    const model1 = scriptedModel([
      {
        toolCalls: [
          { toolName: 'read', input: { path: 'a' }, toolCallId: 'c0' },
          { toolName: 'run', input: { cmd: 'make' }, toolCallId: 'c1' },
          { toolName: 'run', input: { cmd: 'test' }, toolCallId: 'c2' },
          { toolName: 'read', input: { path: 'b' }, toolCallId: 'c3' },
        ],
      },
    ]);
    const rt1 = runtimeOn([], ran, suspendingApproval);
    const first = await rt1.startTurn({ model: model1, input: 'build it' }).done;
    expect(first.outcome).toBe('suspended');
    expect(first.suspension).toMatchObject({ type: 'turn/suspended', turnId: 'turn-1', stepIndex: 0, calls: [{ callId: 'c1' }], held: [] });
    expect(model1.calls).toHaveLength(1);
    expect(ran).toEqual(['read a']);
    const log1 = rt1.log.events();
    // The four calls arrive in one burst of the stream: all four are logged before any runs.
    expect(log1.map((e) => e.type)).toEqual(['turn/start', 'step/start', 'tool/call', 'tool/call', 'tool/call', 'tool/call', 'tool/result', 'tool/approval-request', 'turn/suspended']);
    expect(rt1.pendingSuspension()?.approvals).toEqual([{ callId: 'c1', toolName: 'run', input: '{"cmd":"make"}', reason: 'may I run?' }]);
    // A new turn waits for the resume.
    expect(() => rt1.startTurn({ model: model1, input: 'next' })).toThrow(/suspended/);

    // "Another process": a new runtime on a copy of the log; nothing else is shared.
    const asked: string[] = [];
    const model2 = scriptedModel([{ toolCalls: [{ toolName: 'run', input: { cmd: 'make' }, toolCallId: 'c4' }] }, { text: 'built and tested' }]);
    const rt2 = runtimeOn(log1, ran, answering('allowed-always', asked));
    expect(rt2.pendingSuspension()?.turnId).toBe('turn-1');
    const second = await rt2.resumeTurn({ model: model2 }).done;
    expect(second).toMatchObject({ turnId: 'turn-1', outcome: 'completed', steps: 3, text: 'built and tested' });
    // Asked once for c1 and once for c2 (other args); c4 repeats c1's args: remembered, not asked.
    expect(asked).toEqual(['run {"cmd":"make"}', 'run {"cmd":"test"}']);
    // The suspended step's model response is not requested again: model2 answered steps 1 and 2 only.
    expect(model1.calls).toHaveLength(1);
    expect(model2.calls).toHaveLength(2);
    // Its first request sees the suspended step whole: the four calls and their four results, in order.
    const prompt = model2.calls[0]!.prompt;
    const parts = (role: string, type: string) =>
      prompt.flatMap((m) => (m.role === role && Array.isArray(m.content) ? (m.content as Array<{ type: string; toolCallId?: string }>).filter((p) => p.type === type).map((p) => p.toolCallId) : []));
    expect(parts('assistant', 'tool-call')).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(parts('tool', 'tool-result')).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(ran).toEqual(['read a', 'run make', 'run test', 'read b', 'run make']);
    const all = rt2.log.events();
    expectValidSession(all);
    expect(results(all)).toEqual(['c0:ok', 'c1:ok', 'c2:ok', 'c3:ok', 'c4:ok']);
    const after = all.slice(log1.length);
    expect(after.filter((e) => e.type === 'tool/call').map((e) => e.type === 'tool/call' && e.callId)).toEqual(['c4']);
    expect(after.filter((e) => e.type === 'turn/start' || (e.type === 'step/start' && e.stepIndex === 0))).toEqual([]);
    expect(after.filter((e) => e.type === 'tool/approval-request').map((e) => e.type === 'tool/approval-request' && e.callId)).toEqual(['c2']);
    expect(after.filter((e) => e.type === 'tool/approval-answer').map((e) => e.type === 'tool/approval-answer' && `${e.callId}:${e.answer}`)).toEqual([
      'c1:allowed-always',
      'c2:allowed-always',
      'c4:remembered',
    ]);
    const stepEnd0 = all.find((e) => e.type === 'step/end' && e.stepIndex === 0);
    expect(stepEnd0).toMatchObject({ finishReason: 'tool-calls', toolCalls: 4 });
    expect(rt2.pendingSuspension()).toBeUndefined();
  });

  it('a parallel call suspends: calls before commit, later ones that ran are held and keep their result (run once)', async () => {
    const ran: string[] = [];
    const model1 = scriptedModel([
      {
        toolCalls: [
          { toolName: 'read', input: { path: 'a' }, toolCallId: 'p0' },
          { toolName: 'peek', input: { what: 'x' }, toolCallId: 'p1' },
          { toolName: 'read', input: { path: 'b' }, toolCallId: 'p2' },
          { toolName: 'run', input: { cmd: 'late' }, toolCallId: 'p3' },
        ],
      },
    ]);
    const rt1 = runtimeOn([], ran, suspendingApproval);
    const first = await rt1.startTurn({ model: model1, input: 'look' }).done;
    expect(first.outcome).toBe('suspended');
    expect(first.suspension?.calls.map((c) => c.callId)).toEqual(['p1']);
    expect(first.suspension?.held.map((h) => h.callId)).toEqual(['p2']);
    expect(results(rt1.log.events())).toEqual(['p0:ok']);

    const asked: string[] = [];
    const rt2 = runtimeOn(rt1.log.events(), ran, answering('allowed-once', asked));
    const model2 = scriptedModel([{ text: 'done' }]);
    const second = await rt2.resumeTurn({ model: model2 }).done;
    expect(second.outcome).toBe('completed');
    expect(asked).toEqual(['peek {"what":"x"}', 'run {"cmd":"late"}']);
    // p2 ran once (before the suspension); p3 ran after p1 as planned (exclusive, last).
    expect(ran).toEqual(['read a', 'read b', 'peek x', 'run late']);
    const all = rt2.log.events();
    expectValidSession(all);
    expect(results(all)).toEqual(['p0:ok', 'p1:ok', 'p2:ok', 'p3:ok']);
    const p2 = all.find((e) => e.type === 'tool/result' && e.callId === 'p2');
    expect(p2?.type === 'tool/result' && p2.result.content).toBe('contents of b');
  });

  it('suspended again after a resume: later calls that had not started run, are held, and are not run a third time', async () => {
    const ran: string[] = [];
    const calls = [
      { toolName: 'read', input: { path: 'a' }, toolCallId: 'p0' },
      { toolName: 'peek', input: { what: 'x' }, toolCallId: 'p1' },
      { toolName: 'read', input: { path: 'b' }, toolCallId: 'p2' },
      { toolName: 'read', input: { path: 'c' }, toolCallId: 'p3' },
    ];
    // One at a time in the first process: p2 and p3 have not started when p1 suspends.
    const rt1 = runtimeOn([], ran, suspendingApproval, 1);
    const first = await rt1.startTurn({ model: scriptedModel([{ toolCalls: calls }]), input: 'look' }).done;
    expect(first.suspension).toMatchObject({ calls: [{ callId: 'p1' }], held: [] });
    expect(ran).toEqual(['read a']);
    // The second process suspends again: p2 and p3 (waiting for p1's answer) then run and are held.
    const rt2 = runtimeOn(rt1.log.events(), ran, suspendingApproval, 4);
    const model2 = scriptedModel([]);
    const second = await rt2.resumeTurn({ model: model2 }).done;
    expect(second.outcome).toBe('suspended');
    expect(second.suspension).toMatchObject({ calls: [{ callId: 'p1' }], held: [{ callId: 'p2' }, { callId: 'p3' }] });
    expect(ran).toEqual(['read a', 'read b', 'read c']);
    expect(rt2.log.events().filter((e) => e.type === 'tool/approval-request')).toHaveLength(1);
    // The third answers: p1 runs; p2 and p3 keep the results of the second process.
    const asked: string[] = [];
    const rt3 = runtimeOn(rt2.log.events(), ran, answering('allowed-once', asked), 4);
    const model3 = scriptedModel([{ text: 'seen' }]);
    expect((await rt3.resumeTurn({ model: model3 }).done).outcome).toBe('completed');
    expect(asked).toEqual(['peek {"what":"x"}']);
    expect(model2.calls).toHaveLength(0);
    expect(model3.calls).toHaveLength(1);
    expect(ran).toEqual(['read a', 'read b', 'read c', 'peek x']);
    const all = rt3.log.events();
    expectValidSession(all);
    expect(results(all)).toEqual(['p0:ok', 'p1:ok', 'p2:ok', 'p3:ok']);
  });

  it('calls after the pending one are planned by their logged mode, even if their tool now says otherwise', async () => {
    const ran: string[] = [];
    const calls = [
      { toolName: 'run', input: { cmd: 'make' }, toolCallId: 'm0' },
      { toolName: 'read', input: { path: 'a' }, toolCallId: 'm1' },
      { toolName: 'read', input: { path: 'b' }, toolCallId: 'm2' },
    ];
    const rt1 = runtimeOn([], ran, suspendingApproval);
    expect((await rt1.startTurn({ model: scriptedModel([{ toolCalls: calls }]), input: 'x' }).done).outcome).toBe('suspended');
    // The second process's `read` claims to be exclusive now; the log planned m1 and m2 parallel.
    let active = 0;
    let most = 0;
    const read = defineTool({
      name: 'read',
      input: z.object({ path: z.string() }),
      isConcurrencySafe: () => false,
      execute: async (a) => {
        most = Math.max(most, ++active);
        for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
        active--;
        ran.push(`read ${a.path}`);
        return a.path;
      },
    });
    const log = createMemoryLog({ initial: rt1.log.events() });
    const rt2 = createRuntime({ log, tools: [read, ...toolsRecording(ran).filter((t) => t.name !== 'read')], approval: answering('allowed-once', []) });
    rt2.hooks.on('tools/pre-execute', 'ask', (call, next) => (call.toolName === 'run' ? { kind: 'ask' } : next()));
    expect((await rt2.resumeTurn({ model: scriptedModel([{ text: 'ok' }]) }).done).outcome).toBe('completed');
    expect(most).toBe(2);
    expect(ran).toEqual(['run make', 'read a', 'read b']);
    expect(results(rt2.log.events())).toEqual(['m0:ok', 'm1:ok', 'm2:ok']);
    expectValidSession(rt2.log.events());
  });

  it('a denied answer after the resume ends the call APPROVAL_DENIED and the turn goes on', async () => {
    const ran: string[] = [];
    const rt1 = runtimeOn([], ran, suspendingApproval);
    await rt1.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'run', input: { cmd: 'rm' }, toolCallId: 'r1' }] }]), input: 'x' }).done;
    const rt2 = runtimeOn(rt1.log.events(), ran, answering('denied', []));
    const r = await rt2.resumeTurn({ model: scriptedModel([{ text: 'ok, not running it' }]) }).done;
    expect(r.outcome).toBe('completed');
    expect(ran).toEqual([]);
    expectValidSession(rt2.log.events());
    expect(results(rt2.log.events())).toEqual([`r1:${ErrorCode.APPROVAL_DENIED}`]);
  });

  it('a crash before the answer keeps the approval pending; a crash after it is closed INTERRUPTED', async () => {
    const ran: string[] = [];
    const rt1 = runtimeOn([], ran, suspendingApproval);
    await rt1.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'run', input: { cmd: 'make' }, toolCallId: 'k1' }] }]), input: 'x' }).done;
    const suspended = rt1.log.events();
    // Resumed, then killed while the question is open: nothing was appended, nothing closed.
    const log2 = createMemoryLog({ initial: suspended });
    expect(closeOpenWork(log2, 'crash')).toEqual({ calls: 0, steps: 0, turns: 0 });
    const rt2 = runtimeOn(log2.events(), ran, { request: () => new Promise(() => {}) });
    void rt2.resumeTurn({ model: scriptedModel([]) });
    await new Promise((r) => setTimeout(r, 20));
    expect(rt2.log.events()).toHaveLength(suspended.length);
    expect(createRuntime({ log: createMemoryLog({ initial: rt2.log.events() }) }).pendingSuspension()?.approvals.map((a) => a.callId)).toEqual(['k1']);
    // Answered, then killed while the call runs: an ordinary crash.
    const log3 = createMemoryLog({ initial: suspended });
    log3.append({ type: 'tool/approval-answer', turnId: 'turn-1', stepIndex: 0, callId: 'k1', answer: 'allowed-once' });
    expect(closeOpenWork(log3, 'crash')).toEqual({ calls: 1, steps: 1, turns: 1 });
    expectValidSession(log3.events());
  });
});
