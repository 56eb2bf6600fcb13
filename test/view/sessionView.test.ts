/**
 * The session view (src/view/): a subscribable store of frozen values built from the log, the
 * stage stream and the turn handles. Pinned here: a kept snapshot never changes (serialised when it
 * was handed out and again at the end, and frozen all the way down); what did not change keeps its
 * reference; calls stay in the model's order while they finish in reverse; approvals are answered
 * through the view (once, always, deny, decide later) and a question of a suspended turn becomes
 * answerable when the turn is resumed from its log; queued turns and steers are visible as such.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { scriptedModel, type ScriptedRequest } from '../../src/adapters/model/index.js';
import { ErrorCode, type LogEvent } from '../../src/protocol/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { createMemoryLog } from '../../src/runtime/log/sessionLog.js';
import { createApprovalInbox, createSessionView, type SessionSnapshot, type SessionView } from '../../src/view/index.js';

interface Gate {
  open(): void;
  readonly wait: Promise<void>;
}
const gate = (): Gate => {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { open, wait };
};

/** A runtime whose `wait` calls each finish when the test opens their gate, and whose `write` asks. */
function setup(options: { events?: readonly LogEvent[] } = {}) {
  const gates = new Map<string, Gate>();
  const gateOf = (name: string) => {
    let g = gates.get(name);
    if (!g) gates.set(name, (g = gate()));
    return g;
  };
  const finished: string[] = [];
  const wait = defineTool({
    name: 'wait',
    input: z.object({ name: z.string() }),
    isConcurrencySafe: () => true,
    execute: async ({ name }) => {
      await gateOf(name).wait;
      finished.push(name);
      return `${name} done`;
    },
  });
  const write = defineTool({
    name: 'write',
    input: z.object({ path: z.string() }),
    execute: async ({ path }) => `wrote ${path}`,
  });
  const approvals = createApprovalInbox();
  const log = createMemoryLog(options.events ? { initial: options.events.map((e) => structuredClone(e)) } : {});
  const rt = createRuntime({ log, tools: [wait, write], approval: approvals });
  rt.hooks.on('tools/pre-execute', 'ask-before-write', (call, next) => (call.toolName === 'write' ? { kind: 'ask', reason: 'changes a file' } : next()));
  const view = createSessionView(rt, { approvals });
  return { rt, view, approvals, gateOf, finished };
}

/** Lets promise chains and timers of 0 ms run until `cond` holds (a bound that only catches a hang). */
async function until(cond: () => boolean, what = 'condition') {
  for (let i = 0; i < 2_000 && !cond(); i++) await new Promise((r) => setTimeout(r, 0));
  if (!cond()) throw new Error(`never reached: ${what}`);
}

const turnOf = (view: SessionView, turnId: string) => view.getSnapshot().turns.find((t) => t.turnId === turnId);
const rows = (view: SessionView, turnId: string) => (turnOf(view, turnId)?.calls ?? []).map((c) => `${c.index} ${c.stage}`);

/** Every object reachable from `value` is frozen. */
function expectDeepFrozen(value: unknown, path = 'snapshot', seen = new Set<object>()) {
  if (value === null || typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  expect(Object.isFrozen(value), `${path} is frozen`).toBe(true);
  for (const [k, v] of Object.entries(value)) expectDeepFrozen(v, `${path}.${k}`, seen);
}

const batchOfThree = () =>
  scriptedModel([
    { text: 'Waiting on three.', toolCalls: ['a', 'b', 'c'].map((name) => ({ toolName: 'wait', input: { name } })) },
    { text: 'All three are done.' },
  ]);

describe('the session view', () => {
  it('keeps a parallel batch in the model order while the calls finish in reverse; a later call is `settled` until the calls before it commit', async () => {
    const { view, gateOf, finished } = setup();
    const turn = view.startTurn({ model: batchOfThree(), input: 'wait on three' });
    await until(() => rows(view, turn.turnId).join() === '0 executing,1 executing,2 executing', 'all three running');
    gateOf('c').open();
    await until(() => rows(view, turn.turnId).join() === '0 executing,1 executing,2 settled', 'c settled, held');
    gateOf('b').open();
    await until(() => rows(view, turn.turnId).join() === '0 executing,1 settled,2 settled', 'b settled, held');
    gateOf('a').open();
    await turn.done;
    await until(() => turnOf(view, turn.turnId)?.state === 'ended');
    expect(finished).toEqual(['c', 'b', 'a']);
    const t = turnOf(view, turn.turnId)!;
    expect(t.calls.map((c) => `${c.callId} ${c.stage} ${c.result?.content}`)).toEqual(['call-1-0 done a done', 'call-1-1 done b done', 'call-1-2 done c done']);
    expect(t.calls.map((c) => c.args)).toEqual([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    expect(t.steps.map((s) => [s.stepIndex, s.state, s.text])).toEqual([
      [0, 'ended', 'Waiting on three.'],
      [1, 'ended', 'All three are done.'],
    ]);
    expect(t).toMatchObject({ state: 'ended', outcome: 'completed', answer: 'All three are done.', input: 'wait on three' });
    // The turn's flat list holds the very objects its steps hold.
    expect(t.calls[1]).toBe(t.steps[0]!.calls[1]);
  });

  it('never changes a snapshot it handed out: each one, kept, serialises the same at the end and is frozen all the way down', async () => {
    const { view, gateOf } = setup();
    const kept: Array<{ snapshot: SessionSnapshot; json: string }> = [];
    const keep = () => {
      const snapshot = view.getSnapshot();
      if (kept[kept.length - 1]?.snapshot !== snapshot) kept.push({ snapshot, json: JSON.stringify(snapshot) });
    };
    view.subscribe(keep);
    const model = scriptedModel([
      { text: 'Three waits and a write.', toolCalls: [...['a', 'b', 'c'].map((name) => ({ toolName: 'wait', input: { name } })), { toolName: 'write', input: { path: 'x.md' } }] },
      (r: ScriptedRequest) => ({ text: `saw ${JSON.stringify(r.prompt).includes('also x') ? 'the steer' : 'nothing'}` }),
    ]);
    const turn = view.startTurn({ model, input: 'go' });
    keep();
    await until(() => rows(view, turn.turnId).length === 4);
    gateOf('c').open();
    gateOf('a').open();
    gateOf('b').open();
    await until(() => view.getSnapshot().approvals.some((a) => a.answerable), 'the write asks');
    void view.steer(turn.turnId, 'also x');
    await until(() => turnOf(view, turn.turnId)?.steers[0]?.status === 'waiting');
    expect(view.approve(view.getSnapshot().approvals[0]!.id)).toBe(true);
    await turn.done;
    await until(() => turnOf(view, turn.turnId)?.state === 'ended');
    keep();
    expect(turnOf(view, turn.turnId)?.answer).toBe('saw the steer');
    expect(kept.length).toBeGreaterThan(8);
    for (const k of kept) {
      expect(JSON.stringify(k.snapshot)).toBe(k.json);
      expectDeepFrozen(k.snapshot);
    }
  });

  it('keeps the references of what did not change: other turns, other steps, the other calls of a step', async () => {
    const { view, gateOf } = setup();
    const first = view.startTurn({ model: batchOfThree(), input: 'one' });
    for (const n of ['a', 'b', 'c']) gateOf(n).open();
    await first.done;
    await until(() => turnOf(view, first.turnId)?.state === 'ended');
    const before = view.getSnapshot();
    const firstTurn = before.turns[0]!;

    const second = view.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'wait', input: { name: 'x' } }, { toolName: 'wait', input: { name: 'y' } }] }, { text: 'ok' }]), input: 'two' });
    await until(() => rows(view, second.turnId).join() === '0 executing,1 executing');
    const mid = view.getSnapshot();
    expect(mid).not.toBe(before);
    expect(mid.turns[0]).toBe(firstTurn);
    const [x, y] = mid.turns[1]!.calls;
    gateOf('y').open();
    await until(() => rows(view, second.turnId).join() === '0 executing,1 settled');
    const later = view.getSnapshot();
    expect(later.turns[0]).toBe(firstTurn);
    expect(later.turns[1]!.calls[0]).toBe(x); // untouched
    expect(later.turns[1]!.calls[1]).not.toBe(y); // its stage changed
    expect(y!.stage).toBe('executing'); // and the old object still says what it said
    gateOf('x').open();
    await second.done;
    await until(() => turnOf(view, second.turnId)?.state === 'ended');
    const end = view.getSnapshot();
    expect(end.turns[0]).toBe(firstTurn);
    // No change, no new snapshot.
    expect(view.getSnapshot()).toBe(end);
  });

  it('answers approvals through the view: allow once, deny with a reason, always (not asked again)', async () => {
    const { view, rt } = setup();
    const writes = (n: number) => scriptedModel([{ toolCalls: Array.from({ length: n }, (_, i) => ({ toolName: 'write', input: { path: i === 0 ? 'a.md' : 'b.md' } })) }, { text: 'done' }]);
    const t1 = view.startTurn({ model: writes(2), input: 'write' });
    await until(() => view.getSnapshot().approvals[0]?.answerable === true);
    const asked = view.getSnapshot().approvals[0]!;
    expect(asked).toMatchObject({ toolName: 'write', args: { path: 'a.md' }, reason: 'changes a file', callId: 'call-1-0', turnId: t1.turnId, stepIndex: 0 });
    expect(turnOf(view, t1.turnId)?.calls[0]?.approval).toBe(asked);
    expect(turnOf(view, t1.turnId)?.calls[0]?.stage).toBe('awaitingApproval');
    expect(view.approve('no-such-approval')).toBe(false);
    expect(view.approve(asked.id, 'once')).toBe(true);
    // The second write (exclusive: after the first) asks next; deny it with a reason.
    await until(() => view.getSnapshot().approvals[0]?.callId === 'call-1-1' && view.getSnapshot().approvals[0]!.answerable);
    expect(view.deny(view.getSnapshot().approvals[0]!.id, 'not b')).toBe(true);
    await t1.done;
    await until(() => turnOf(view, t1.turnId)?.state === 'ended');
    const calls = turnOf(view, t1.turnId)!.calls;
    expect(calls.map((c) => [c.stage, c.approvalAnswer, c.result?.error?.code ?? 'ok', c.approval])).toEqual([
      ['done', 'allowed-once', 'ok', undefined],
      ['done', 'denied', ErrorCode.APPROVAL_DENIED, undefined],
    ]);
    expect(view.getSnapshot().approvals).toEqual([]);
    // The reason typed with the deny reaches the model with the result (issue 32 item 4).
    expect(calls[1]!.result?.content).toContain('not b');
    expect(rt.log.events().find((e) => e.type === 'tool/approval-answer' && e.callId === 'call-1-1')).toMatchObject({ answer: 'denied', reason: 'not b' });

    const t2 = view.startTurn({ model: writes(1), input: 'again' });
    await until(() => view.getSnapshot().approvals[0]?.answerable === true);
    view.approve(view.getSnapshot().approvals[0]!.id, 'always');
    await t2.done;
    const t3 = view.startTurn({ model: writes(1), input: 'and again' });
    await t3.done;
    await until(() => turnOf(view, t3.turnId)?.state === 'ended');
    expect(turnOf(view, t3.turnId)!.calls.map((c) => [c.approvalAnswer, c.result?.content])).toEqual([['remembered', 'wrote a.md']]);
  });

  it('shows a queued turn as queued until it starts, and a steer as waiting until the next request takes it', async () => {
    const { view, gateOf } = setup();
    const seen: string[] = [];
    const model = () => scriptedModel([{ toolCalls: [{ toolName: 'wait', input: { name: 'q' } }] }, (r: ScriptedRequest) => ({ text: JSON.stringify(r.prompt).includes('and then z') ? 'steered' : 'plain' })]);
    const first = view.startTurn({ model: model(), input: 'first' });
    const second = view.startTurn({ model: scriptedModel([{ text: 'second done' }]), input: 'second' });
    await until(() => rows(view, first.turnId).join() === '0 executing');
    expect(view.getSnapshot().turns.map((t) => `${t.turnId} ${t.state}`)).toEqual([`${first.turnId} running`, `${second.turnId} queued`]);
    expect(view.getSnapshot().activeTurnId).toBe(first.turnId);
    const steered = view.steer(first.turnId, 'and then z');
    await until(() => turnOf(view, first.turnId)?.steers.length === 1);
    seen.push(turnOf(view, first.turnId)!.steers[0]!.status);
    gateOf('q').open();
    expect(await steered).toMatchObject({ delivered: 'steer', stepIndex: 1 });
    await second.done;
    await until(() => turnOf(view, second.turnId)?.state === 'ended');
    seen.push(turnOf(view, first.turnId)!.steers[0]!.status);
    expect(seen).toEqual(['waiting', 'delivered']);
    expect(turnOf(view, first.turnId)).toMatchObject({ answer: 'steered', steers: [{ text: 'and then z', status: 'delivered', stepIndex: 1 }] });
    expect(turnOf(view, second.turnId)).toMatchObject({ state: 'ended', outcome: 'completed', answer: 'second done' });

    // A follow-up shows what it follows (from its turn/start).
    const third = view.followUp('and a third', { model: scriptedModel([{ text: 'third done' }]) });
    await third.done;
    await until(() => turnOf(view, third.turnId)?.state === 'ended');
    expect(turnOf(view, third.turnId)).toMatchObject({ input: 'and a third', followUp: { kind: 'follow-up', after: second.turnId }, answer: 'third done' });
  });

  it('a cancel shows `cancelling` until the turn ends cancelled', async () => {
    const { view, gateOf } = setup();
    // The body ignores its signal: the turn winds down only once it returns.
    const turn = view.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'wait', input: { name: 'slow' } }] }, { text: 'x' }]), input: 'w' });
    await until(() => rows(view, turn.turnId).join() === '0 executing');
    expect(view.cancel(turn.turnId, 'changed my mind')).toBe(true);
    await until(() => turnOf(view, turn.turnId)?.state === 'cancelling');
    gateOf('slow').open();
    await turn.done;
    await until(() => turnOf(view, turn.turnId)?.state === 'ended');
    expect(turnOf(view, turn.turnId)).toMatchObject({ outcome: 'cancelled' });
    expect(view.cancel('turn-99')).toBe(false);
  });

  it('a turn cancelled while a question is open withdraws it', async () => {
    const { view } = setup();
    const turn = view.startTurn({ model: scriptedModel([{ toolCalls: [{ toolName: 'write', input: { path: 'a.md' } }] }, { text: 'x' }]), input: 'w' });
    await until(() => view.getSnapshot().approvals[0]?.answerable === true);
    view.cancel(turn.turnId);
    await turn.done;
    await until(() => turnOf(view, turn.turnId)?.state === 'ended');
    expect(turnOf(view, turn.turnId)).toMatchObject({ outcome: 'cancelled' });
    expect(view.getSnapshot().approvals).toEqual([]);
    expect(turnOf(view, turn.turnId)!.calls.map((c) => [c.approval, c.approvalAnswer, c.result?.error?.code])).toEqual([[undefined, 'cancelled', ErrorCode.ABORTED_BEFORE_DISPATCH]]);
  });

  it('decide later suspends the turn; a view of a new runtime on the log shows it suspended, resumes it, and answers the same question', async () => {
    const a = setup();
    const model = scriptedModel([{ text: 'Writing.', toolCalls: [{ toolName: 'write', input: { path: 's.md' } }] }, { text: 'written' }]);
    const turn = a.view.startTurn({ model, input: 'write s' });
    await until(() => a.view.getSnapshot().approvals[0]?.answerable === true);
    expect(a.view.suspend(a.view.getSnapshot().approvals[0]!.id)).toBe(true);
    expect((await turn.done).outcome).toBe('suspended');
    await until(() => a.view.getSnapshot().suspendedTurnId === turn.turnId);

    // A new page: a runtime on the same events, a fresh view.
    const b = setup({ events: a.rt.log.events() });
    const s = b.view.getSnapshot();
    expect(s.suspendedTurnId).toBe(turn.turnId);
    expect(s.turns.map((t) => [t.turnId, t.state, t.input])).toEqual([[turn.turnId, 'suspended', 'write s']]);
    expect(s.approvals.map((x) => [x.callId, x.toolName, x.answerable])).toEqual([['call-1-0', 'write', false]]);
    expect(s.turns[0]!.steps[0]).toMatchObject({ state: 'suspended', text: 'Writing.' });
    const resumed = b.view.resume({ model: scriptedModel([{ text: 'written after the resume' }]) });
    await until(() => b.view.getSnapshot().approvals[0]?.answerable === true);
    expect(turnOf(b.view, turn.turnId)?.state).toBe('running');
    expect(b.view.approve(b.view.getSnapshot().approvals[0]!.id)).toBe(true);
    expect((await resumed.done).outcome).toBe('completed');
    await until(() => turnOf(b.view, turn.turnId)?.state === 'ended');
    expect(turnOf(b.view, turn.turnId)).toMatchObject({ outcome: 'completed', answer: 'written after the resume' });
    expect(turnOf(b.view, turn.turnId)!.calls.map((c) => c.result?.content)).toEqual(['wrote s.md']);
    expect(b.view.getSnapshot().suspendedTurnId).toBeUndefined();
  });

  it('hostile arguments: JSON nested past the limits stays text (no stack overflow), odd call ids keep their own rows', async () => {
    const { view } = setup();
    const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    const turn = view.startTurn({
      model: scriptedModel([
        {
          toolCalls: [
            { toolName: 'wait', input: deep, toolCallId: '__proto__' },
            { toolName: 'wait', input: '{"name":', toolCallId: 'a/0/b' },
            { toolName: 'nope', input: { name: 'x' }, toolCallId: 'constructor' },
          ],
        },
        { text: 'ok' },
      ]),
      input: 'hostile',
    });
    await turn.done;
    await until(() => turnOf(view, turn.turnId)?.state === 'ended');
    const calls = turnOf(view, turn.turnId)!.calls;
    expect(calls.map((c) => [c.callId, c.stage, c.result?.error?.code])).toEqual([
      ['__proto__', 'done', ErrorCode.INVALID_ARGS],
      ['a/0/b', 'done', ErrorCode.INVALID_ARGS],
      ['constructor', 'done', ErrorCode.UNKNOWN_TOOL],
    ]);
    expect(calls[0]!.args).toBe(deep);
    expect(calls[1]!.args).toBe('{"name":');
    expect(calls[2]!.args).toEqual({ name: 'x' });
    expectDeepFrozen(view.getSnapshot());
  });

  it('notifies once per burst of changes, and not at all after dispose', async () => {
    const { view, gateOf } = setup();
    let calls = 0;
    view.subscribe(() => calls++);
    const turn = view.startTurn({ model: batchOfThree(), input: 'x' });
    for (const n of ['a', 'b', 'c']) gateOf(n).open();
    await turn.done;
    await until(() => turnOf(view, turn.turnId)?.state === 'ended');
    const events = view.getSnapshot().lastSeq;
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThan(events); // bursts: fewer notifications than log events
    view.dispose();
    const after = calls;
    const t2 = view.startTurn({ model: batchOfThree(), input: 'y' });
    for (const n of ['a', 'b', 'c']) gateOf(n).open();
    await t2.done;
    expect(calls).toBe(after);
  });
});
