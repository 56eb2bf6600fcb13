/**
 * The step-routed view of a log (SPEC §8.11, §8.13): an event for a step that has ended is not
 * appended; a `LATE_EVENT_DISCARDED` warning holding it is, on the turn while the turn is open,
 * else on the session. What is open comes from the log's index; what the view remembers of steps
 * that are not open must never go stale.
 */
import { describe, expect, it } from 'vitest';
import type { NewLogEvent } from '../../../src/protocol/index.js';
import { createMemoryLog } from '../../../src/runtime/log/sessionLog.js';
import { createStepRoutedLog, LATE_EVENT_DISCARDED } from '../../../src/runtime/log/stepRoutedLog.js';

const warningOf = (turnId: string, stepIndex: number): Extract<NewLogEvent, { type: 'warning' }> => ({ type: 'warning', turnId, stepIndex, code: 'X', message: 'late or not' });

describe('createStepRoutedLog', () => {
  it('appends an event of an open step, and of a step the log never saw, as it is', () => {
    const log = createMemoryLog();
    const view = createStepRoutedLog(log);
    view.append({ type: 'turn/start', turnId: 't', input: 'x' } as NewLogEvent);
    view.append({ type: 'step/start', turnId: 't', stepIndex: 0 } as NewLogEvent);
    expect(view.append(warningOf('t', 0))).toMatchObject({ type: 'warning', code: 'X', turnId: 't', stepIndex: 0 });
    expect(view.append(warningOf('t', 7))).toMatchObject({ type: 'warning', code: 'X', turnId: 't', stepIndex: 7 });
  });

  it('routes an event of an ended step to a warning on the open turn, then on the session once the turn ended', () => {
    const log = createMemoryLog();
    const view = createStepRoutedLog(log);
    log.append({ type: 'turn/start', turnId: 't', input: 'x' } as NewLogEvent);
    log.append({ type: 'step/start', turnId: 't', stepIndex: 0 } as NewLogEvent);
    log.append({ type: 'step/end', turnId: 't', stepIndex: 0 } as NewLogEvent);
    const late = warningOf('t', 0);
    const onTurn = view.append(late);
    expect(onTurn).toMatchObject({ type: 'warning', code: LATE_EVENT_DISCARDED, turnId: 't', data: { event: late } });
    expect('stepIndex' in onTurn).toBe(false);
    log.append({ type: 'turn/end', turnId: 't', outcome: 'completed' } as NewLogEvent);
    const onSession = view.append(late);
    expect(onSession).toMatchObject({ type: 'warning', code: LATE_EVENT_DISCARDED, data: { event: late } });
    expect('turnId' in onSession).toBe(false);
  });

  it('a step first seen as never started, which then starts and ends, is ended for the view', () => {
    const log = createMemoryLog();
    const view = createStepRoutedLog(log);
    log.append({ type: 'turn/start', turnId: 't', input: 'x' } as NewLogEvent);
    // Looked up while the log has no such step: appended, and remembered as "not ended, up to here".
    expect(view.append(warningOf('t', 1))).toMatchObject({ code: 'X' });
    log.append({ type: 'step/start', turnId: 't', stepIndex: 1 } as NewLogEvent);
    log.append({ type: 'step/end', turnId: 't', stepIndex: 1 } as NewLogEvent);
    expect(view.append(warningOf('t', 1))).toMatchObject({ code: LATE_EVENT_DISCARDED, turnId: 't' });
  });

  it('knows steps that ended before the view existed, and more closed steps than it remembers', () => {
    const log = createMemoryLog();
    log.append({ type: 'turn/start', turnId: 't', input: 'x' } as NewLogEvent);
    for (let i = 0; i < 100; i++) {
      log.append({ type: 'step/start', turnId: 't', stepIndex: i } as NewLogEvent);
      log.append({ type: 'step/end', turnId: 't', stepIndex: i } as NewLogEvent);
    }
    const view = createStepRoutedLog(log);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 100; i++) expect(view.append(warningOf('t', i)).code).toBe(LATE_EVENT_DISCARDED);
    }
    // A step still open is not routed, however many closed ones the view looked at.
    log.append({ type: 'step/start', turnId: 't', stepIndex: 100 } as NewLogEvent);
    expect(view.append(warningOf('t', 100)).code).toBe('X');
  });
});
