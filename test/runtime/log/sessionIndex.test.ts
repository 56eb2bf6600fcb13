import { describe, expect, it } from 'vitest';
import { createMemoryLog, type SessionLog } from '../../../src/runtime/log/sessionLog.js';

const call = (log: SessionLog, turnId: string, stepIndex: number, callId: string) =>
  log.append({ type: 'tool/call', turnId, stepIndex, callId, toolName: 'read', input: '{}', index: 0, executionMode: 'parallel' });

describe('session index: calls per open step', () => {
  it('counts each call in its own step when the calls of two open steps interleave', () => {
    const log = createMemoryLog();
    const index = log.index;
    log.append({ type: 'turn/start', turnId: 't1', input: 'a' });
    log.append({ type: 'step/start', turnId: 't1', stepIndex: 0 });
    log.append({ type: 'turn/start', turnId: 't2', input: 'b' });
    log.append({ type: 'step/start', turnId: 't2', stepIndex: 0 });
    call(log, 't1', 0, 'a1');
    call(log, 't1', 0, 'a2');
    call(log, 't2', 0, 'b1');
    call(log, 't1', 0, 'a3');
    call(log, 't2', 0, 'b2');
    expect(index.openWork().steps).toEqual([
      { turnId: 't1', stepIndex: 0, toolCalls: 3 },
      { turnId: 't2', stepIndex: 0, toolCalls: 2 },
    ]);
  });

  it('starts a step that ends and opens again at 0, and counts no call of a step that is not open', () => {
    const log = createMemoryLog();
    const index = log.index;
    log.append({ type: 'turn/start', turnId: 't1', input: 'a' });
    log.append({ type: 'step/start', turnId: 't1', stepIndex: 0 });
    call(log, 't1', 0, 'c1');
    log.append({ type: 'step/end', turnId: 't1', stepIndex: 0, finishReason: 'tool-calls', toolCalls: 1 });
    call(log, 't1', 0, 'late');
    expect(index.openWork({ turnId: 't1' }).steps).toEqual([]);
    log.append({ type: 'step/start', turnId: 't1', stepIndex: 0 });
    expect(index.openWork({ turnId: 't1' }).steps).toEqual([{ turnId: 't1', stepIndex: 0, toolCalls: 0 }]);
    call(log, 't1', 0, 'c2');
    log.append({ type: 'step/start', turnId: 't1', stepIndex: 1 });
    call(log, 't1', 1, 'c3');
    call(log, 't1', 1, 'c4');
    expect(index.openWork({ turnId: 't1' }).steps).toEqual([
      { turnId: 't1', stepIndex: 0, toolCalls: 1 },
      { turnId: 't1', stepIndex: 1, toolCalls: 2 },
    ]);
  });
});
