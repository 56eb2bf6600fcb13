/** The SPEC oracle of dsh/testing on hand-made sessions: each rule fires on the session SPEC forbids, and only there. */
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/protocol/index.js';
import { createMemoryLog } from '../../src/runtime/log/sessionLog.js';
import { judgeBySpec, SPEC_RULES, type BodyRecord } from '../../src/testing/index.js';
import type { TurnResult } from '../../src/runtime/turn/types.js';

type Append = Parameters<ReturnType<typeof createMemoryLog>['append']>[0];
const session = (...events: Append[]): LogEvent[] => {
  const log = createMemoryLog();
  for (const e of events) log.append(e);
  return [...log.events()];
};
const ok = (callId: string, seq: number): Append => ({ type: 'tool/result', turnId: 't', stepIndex: 0, callId, toolName: 'x', sourceEventSeqs: [seq], result: { callId, toolName: 'x', isError: false, content: 'ok', metadata: {} } });
const err = (callId: string, seq: number, code: string): Append => ({
  type: 'tool/result', turnId: 't', stepIndex: 0, callId, toolName: 'x', sourceEventSeqs: [seq],
  result: { callId, toolName: 'x', isError: true, content: code, metadata: {}, error: { name: 'Error', code: code as never, message: code } },
});
const call = (callId: string, index: number): Append => ({ type: 'tool/call', turnId: 't', stepIndex: 0, callId, toolName: 'x', input: '{}', index, executionMode: 'parallel' });
const open: Append[] = [{ type: 'turn/start', turnId: 't', input: 'go' }, { type: 'step/start', turnId: 't', stepIndex: 0 }];
const close: Append[] = [{ type: 'step/end', turnId: 't', stepIndex: 0, finishReason: 'tool-calls', toolCalls: 2 }, { type: 'turn/end', turnId: 't', outcome: 'completed', steps: 1 }];
const ended = { outcome: 'completed', turnId: 't' } as unknown as TurnResult;
const rules = (events: LogEvent[], bodies: BodyRecord[] = []) => judgeBySpec({ events, bodies, result: ended }).map((v) => v.rule);
const body = (over: Partial<BodyRecord>): BodyRecord => ({ callId: 'c1', toolName: 'x', callSeq: 3, process: 1, attempt: 1, args: Object.freeze({}), argsFrozen: true, mode: 'run', ran: true, settledAtSeq: 3, ...over });

describe('judgeBySpec', () => {
  it('a well-formed session keeps every rule', () => {
    expect(rules(session(...open, call('c1', 0), call('c2', 1), ok('c1', 3), ok('c2', 4), ...close), [body({})])).toEqual([]);
  });
  it('results out of the model order (§3)', () => {
    expect(rules(session(...open, call('c1', 0), call('c2', 1), ok('c2', 4), ok('c1', 3), ...close))).toEqual([SPEC_RULES.order]);
  });
  it('a call without a result, and one with two (§3)', () => {
    expect(rules(session(...open, call('c1', 0), call('c2', 1), ok('c1', 3), ok('c1', 3), ...close))).toEqual([SPEC_RULES.pairs, SPEC_RULES.pairs]);
    // Still running: not judged.
    expect(judgeBySpec({ events: session(...open, call('c1', 0)), bodies: [] })).toEqual([]);
  });
  it('a deny undone: a denied call that succeeded, or whose body ran (§2)', () => {
    const denied = session(...open, call('c1', 0), { type: 'tool/approval-answer', turnId: 't', stepIndex: 0, callId: 'c1', answer: 'denied' }, ok('c1', 3), ...close);
    expect(rules(denied)).toEqual([SPEC_RULES.deny]);
    const ran = session(...open, call('c1', 0), err('c1', 3, 'POLICY_DENIED'), ...close);
    expect(rules(ran, [body({})])).toEqual([SPEC_RULES.deny]);
  });
  it('a body still working when its call ended ABORTED (§5), arguments not frozen (§2), a body run twice (§8)', () => {
    const aborted = session(...open, call('c1', 0), err('c1', 3, 'ABORTED'), ...close);
    expect(rules(aborted, [body({ settledAtSeq: 4 })])).toEqual([SPEC_RULES.signal]);
    expect(rules(aborted, [body({ settledAtSeq: undefined })])).toEqual([SPEC_RULES.signal]);
    expect(rules(aborted, [body({ settledAtSeq: 3 })])).toEqual([]);
    const fine = session(...open, call('c1', 0), ok('c1', 3), ...close);
    expect(rules(fine, [body({ argsFrozen: false })])).toEqual([SPEC_RULES.frozen]);
    expect(rules(fine, [body({}), body({ process: 2 })])).toEqual([SPEC_RULES.once]);
    // A retry wrapper's second attempt is no second run.
    expect(rules(fine, [body({}), body({ attempt: 2 })])).toEqual([]);
  });
  it('finalizeContent called twice for one result, or not at all (§2)', () => {
    const fine = session(...open, call('c1', 0), ok('c1', 3), ...close);
    const judged = (n: number) => judgeBySpec({ events: fine, bodies: [body({ outcome: { ok: true, value: 'ok' } })], result: ended, finalized: { x: n } }).map((v) => v.rule);
    expect(judged(1)).toEqual([]);
    expect(judged(2)).toEqual([SPEC_RULES.finalize]);
    expect(judged(0)).toEqual([SPEC_RULES.finalize]);
  });
  it('an open step or turn at the end (§1), a listener that failed closed (§5), a run that waits on nothing', () => {
    expect(rules(session(...open, call('c1', 0), ok('c1', 3)))).toEqual([SPEC_RULES.ends, SPEC_RULES.ends]);
    const failed = session(...open, call('c1', 0), { type: 'hook/failed', turnId: 't', stepIndex: 0, callId: 'c1', hook: 'tools/post-execute', listener: 'audit', message: 'boom', failed: 'closed' }, err('c1', 3, 'HOOK_FAILED'), ...close);
    expect(rules(failed)).toEqual([SPEC_RULES.listeners]);
    expect(judgeBySpec({ events: [], bodies: [], stuck: 'waits' }).map((v) => v.rule)).toEqual([SPEC_RULES.settles]);
  });
});

describe('docs/testing.md', () => {
  it('lists exactly the rules of SPEC_RULES', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync(new URL('../../docs/testing.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('### Every run judged'), doc.indexOf('### A failure'));
    const listed = [...section.matchAll(/^- `([^`]+)`$/gm)].map((m) => m[1]);
    expect(listed).toEqual(Object.values(SPEC_RULES));
  });
});
