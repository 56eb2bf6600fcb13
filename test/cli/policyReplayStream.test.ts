/**
 * `dsh policy replay` reads what happened to each call from its log events (src/cli/policy/replay.ts):
 * a deny by a policy, a guard or a pre-execute or guard hook that failed closed is `deny`; a
 * question is `ask` (ran when the person said yes); anything else `allow`; a call that never
 * reached the policies, or has no result, is not compared. Calls awaiting a result are bounded.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PENDING_CALLS, recordedCallStream, type RecordedCall } from '../../src/cli/policy/replay.js';
import type { LogEvent } from '../../src/protocol/index.js';

let seq = 0;
const ev = (e: Record<string, unknown>) => ({ ...e, seq: ++seq, time: seq }) as unknown as LogEvent;
const callEv = (callId: string) => ev({ type: 'tool/call', turnId: 't', stepIndex: 0, callId, toolName: 'bash', input: '{}', index: 0, executionMode: 'exclusive' });
const asked = (callId: string) => ev({ type: 'tool/approval-request', turnId: 't', stepIndex: 0, callId, toolName: 'bash' });
const result = (callId: string, r: Record<string, unknown>) =>
  ev({ type: 'tool/result', turnId: 't', stepIndex: 0, callId, toolName: 'bash', sourceEventSeqs: [], result: { callId, toolName: 'bash', metadata: {}, content: 'x', ...r } });
const failed = (code: string, decision?: Record<string, unknown>) => ({ isError: true, error: { name: 'E', code, message: code }, ...(decision ? { decision } : {}) });

function replay(events: LogEvent[]): { calls: RecordedCall[]; skipped: number } {
  const calls: RecordedCall[] = [];
  const s = recordedCallStream('s', (c) => calls.push(c));
  for (const e of events) s.onEvent(e);
  return { calls, skipped: s.end() };
}

describe('what happened then, read from the log', () => {
  it('each outcome', () => {
    const { calls, skipped } = replay([
      callEv('policy'), result('policy', failed('POLICY_DENIED', { stage: 'pre-execute', outcome: 'deny', by: 'p' })),
      callEv('guard'), result('guard', failed('GUARD_DENIED', { stage: 'guard', outcome: 'deny', by: 'g' })),
      callEv('prehook'), result('prehook', failed('HOOK_FAILED', { stage: 'pre-execute', outcome: 'failed', by: 'h' })),
      callEv('guardhook'), result('guardhook', failed('HOOK_FAILED', { stage: 'guard', outcome: 'failed', by: 'h' })),
      callEv('posthook'), result('posthook', failed('HOOK_FAILED', { stage: 'post-execute', outcome: 'failed', by: 'h' })),
      callEv('no'), asked('no'), result('no', failed('APPROVAL_DENIED')),
      callEv('yes'), asked('yes'), result('yes', { isError: false }),
      callEv('ran'), result('ran', { isError: false }),
      callEv('cancelled'), result('cancelled', failed('ABORTED_BEFORE_DISPATCH')),
      callEv('unknown'), result('unknown', failed('UNKNOWN_TOOL')),
      callEv('invalid'), result('invalid', failed('INVALID_ARGS')),
      callEv('open'),
    ]);
    expect(calls.map((c) => [c.callId, c.then, c.ran])).toEqual([
      ['policy', 'deny', false],
      ['guard', 'deny', false],
      ['prehook', 'deny', false],
      ['guardhook', 'deny', false],
      ['posthook', 'allow', true],
      ['no', 'ask', false],
      ['yes', 'ask', true],
      ['ran', 'allow', true],
      ['cancelled', 'allow', false],
    ]);
    // unknown, invalid (never reached the policies) and open (no result).
    expect(skipped).toBe(3);
  });

  it('a call is keyed by its turn and id; what decided then is kept; a result or question for no pending call is ignored', () => {
    const inTurn = (turnId: string, e: LogEvent) => ({ ...e, turnId }) as LogEvent;
    const { calls, skipped } = replay([
      inTurn('t1', callEv('a')),
      inTurn('t2', callEv('a')),
      inTurn('t2', asked('a')),
      asked('stray'),
      result('stray', { isError: false }),
      inTurn('t2', result('a', failed('APPROVAL_DENIED', { stage: 'approval', outcome: 'deny', by: 'person' }))),
      inTurn('t1', result('a', failed('POLICY_DENIED', { stage: 'pre-execute', outcome: 'deny', by: 'dsh:permissions' }))),
    ]);
    expect(calls).toEqual([
      { session: 's', turnId: 't2', callId: 'a', toolName: 'bash', input: '{}', then: 'ask', ran: false, thenDecision: { stage: 'approval', outcome: 'deny', by: 'person' } },
      { session: 's', turnId: 't1', callId: 'a', toolName: 'bash', input: '{}', then: 'deny', ran: false, thenDecision: { stage: 'pre-execute', outcome: 'deny', by: 'dsh:permissions' } },
    ]);
    expect(skipped).toBe(0);
  });

  it("a call that ran keeps the content its model saw (a post-execute policy judges it now); a failed call has none", () => {
    const { calls } = replay([callEv('ok'), result('ok', { isError: false, content: 'the output' }), callEv('bad'), result('bad', failed('TOOL_FAILED'))]);
    expect(calls).toStrictEqual([
      { session: 's', turnId: 't', callId: 'ok', toolName: 'bash', input: '{}', content: 'the output', then: 'allow', ran: true },
      { session: 's', turnId: 't', callId: 'bad', toolName: 'bash', input: '{}', then: 'allow', ran: true },
    ]);
  });

  it('ids that would run together without a separator stay two calls (turn "t1" call "c", turn "t" call "1c")', () => {
    const inTurn = (turnId: string, e: LogEvent) => ({ ...e, turnId }) as LogEvent;
    const { calls } = replay([inTurn('t1', callEv('c')), inTurn('t', callEv('1c')), inTurn('t1', result('c', { isError: false })), inTurn('t', result('1c', { isError: false }))]);
    expect(calls.map((c) => [c.turnId, c.callId])).toEqual([['t1', 'c'], ['t', '1c']]);
  });

  it('a call logged again (a resumed step) is one pending call, the newest: it is the last to be dropped', () => {
    const events = [callEv('first'), ...Array.from({ length: MAX_PENDING_CALLS - 1 }, (_, i) => callEv(`c${i}`)), callEv('first'), callEv('one-more')];
    events.push(result('first', { isError: false }), result('c0', { isError: false }));
    const { calls, skipped } = replay(events);
    // `first` moved to the end when logged again, so c0 (then the oldest) was dropped for one-more.
    expect(calls.map((c) => c.callId)).toEqual(['first']);
    expect(skipped).toBe(1 + MAX_PENDING_CALLS - 1);
  });

  it('only a result settles a call; a hook failure without a recorded stage (an older log) and a decision on a success are not denies; an asked call cancelled before it ran did not run', () => {
    const calls: RecordedCall[] = [];
    const s = recordedCallStream('s', (c) => calls.push(c));
    const feed = (...events: LogEvent[]) => events.forEach((e) => s.onEvent(e));
    feed(callEv('a'), ev({ type: 'tool/approval-answer', turnId: 't', stepIndex: 0, callId: 'a', answer: 'denied' }), ev({ type: 'warning', turnId: 't', callId: 'a', code: 'X', message: 'm' }));
    expect(calls).toEqual([]);
    feed(result('a', failed('HOOK_FAILED')));
    feed(callEv('b'), result('b', { isError: false, decision: { stage: 'pre-execute', outcome: 'allow', by: 'dsh:permissions' } }));
    feed(callEv('c'), asked('c'), result('c', failed('ABORTED_BEFORE_DISPATCH')));
    feed(callEv('d'));
    expect(s.skipped()).toBe(0);
    expect(calls.map((c) => [c.callId, c.then, c.ran])).toEqual([
      ['a', 'allow', true],
      ['b', 'allow', true],
      ['c', 'ask', false],
    ]);
    expect(s.end()).toBe(1);
    expect(s.skipped()).toBe(1);
  });

  it('holds at most MAX_PENDING_CALLS calls awaiting a result: the oldest are dropped, counted as not compared', () => {
    const events = Array.from({ length: MAX_PENDING_CALLS + 5 }, (_, i) => callEv(`c${i}`));
    events.push(result('c0', { isError: false }), result(`c${MAX_PENDING_CALLS + 4}`, { isError: false }));
    const { calls, skipped } = replay(events);
    // c0 was dropped before its result came; the newest still had its call.
    expect(calls.map((c) => c.callId)).toEqual([`c${MAX_PENDING_CALLS + 4}`]);
    expect(skipped).toBe(MAX_PENDING_CALLS + 4);
  });
});
