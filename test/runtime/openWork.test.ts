import { describe, expect, it } from 'vitest';
import { ErrorCode, LogEventSchema } from '../../src/protocol/index.js';
import { createMemoryLog } from '../../src/runtime/log/sessionLog.js';
import { closeOpenWork } from '../../src/runtime/openWork.js';

/** The log of a process that died while call c2 ran (c1 had answered). */
function crashedMidTurn() {
  const log = createMemoryLog();
  log.append({ type: 'turn/start', turnId: 't1', input: 'go' });
  log.append({ type: 'step/start', turnId: 't1', stepIndex: 0 });
  const c1 = log.append({ type: 'tool/call', turnId: 't1', stepIndex: 0, callId: 'c1', toolName: 'read', input: '{}', index: 0, executionMode: 'parallel' });
  log.append({ type: 'tool/call', turnId: 't1', stepIndex: 0, callId: 'c2', toolName: 'bash', input: '{}', index: 1, executionMode: 'exclusive' });
  log.append({
    type: 'tool/result',
    turnId: 't1',
    stepIndex: 0,
    callId: 'c1',
    toolName: 'read',
    sourceEventSeqs: [c1.seq],
    result: { callId: 'c1', toolName: 'read', isError: false, content: 'x', metadata: {} },
  });
  return log;
}

describe('closing open work (resume after a crash)', () => {
  it('answers unanswered calls INTERRUPTED, closes the step and the turn, innermost first', () => {
    const log = crashedMidTurn();
    const done = closeOpenWork(log, 'the process stopped');
    expect(done).toEqual({ calls: 1, steps: 1, turns: 1 });
    const added = log.events({ from: 6 });
    expect(added.map((e) => e.type)).toEqual(['tool/result', 'step/end', 'turn/end']);
    const r = added[0]!;
    expect(r.type === 'tool/result' && [r.callId, r.sourceEventSeqs, r.result.error?.code]).toEqual(['c2', [4], ErrorCode.INTERRUPTED]);
    expect(added[2]).toMatchObject({ outcome: 'failed', error: 'the process stopped', steps: 1 });
    for (const e of log.events()) LogEventSchema.parse(e);
  });

  it('changes nothing in a well-formed log (closing twice is harmless)', () => {
    const log = crashedMidTurn();
    closeOpenWork(log, 'first');
    const before = log.lastSeq;
    expect(closeOpenWork(log, 'second')).toEqual({ calls: 0, steps: 0, turns: 0 });
    expect(log.lastSeq).toBe(before);
  });

  it('can be limited to one step, leaving its turn to whoever still runs it', () => {
    const log = crashedMidTurn();
    expect(closeOpenWork(log, 'step crashed', { turnId: 't1', stepIndex: 0 }, false)).toEqual({ calls: 1, steps: 1, turns: 0 });
  });
});
