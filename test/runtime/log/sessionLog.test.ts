import { describe, expect, it } from 'vitest';
import { LogEventSchema, type LogEvent } from '../../../src/protocol/index.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import { createMemoryLog } from '../../../src/runtime/log/sessionLog.js';

const start = (turnId: string) => ({ type: 'turn/start' as const, turnId, input: 'hi' });

describe('session log (in-memory)', () => {
  it('stamps strictly increasing seq from 1 and the clock time; events are frozen', async () => {
    const clock = new ManualClock(1000);
    const log = createMemoryLog({ clock });
    const a = log.append(start('t1'));
    await clock.advance(5);
    const b = log.append({ type: 'step/start', turnId: 't1', stepIndex: 0 });
    expect([a.seq, b.seq]).toEqual([1, 2]);
    expect([a.time, b.time]).toEqual([1000, 1005]);
    expect(Object.isFrozen(a)).toBe(true);
    expect(log.lastSeq).toBe(2);
    for (const e of log.events()) LogEventSchema.parse(e);
  });

  it('reads back by inclusive range and by seq', () => {
    const log = createMemoryLog();
    for (let i = 0; i < 5; i++) log.append(start(`t${i}`));
    expect(log.events({ from: 2, to: 4 }).map((e) => e.seq)).toEqual([2, 3, 4]);
    expect(log.events({ from: 4 }).map((e) => e.seq)).toEqual([4, 5]);
    expect(log.events({ to: 1 }).map((e) => e.seq)).toEqual([1]);
    expect(log.events({ from: 9 })).toEqual([]);
    expect(log.get(3)?.seq).toBe(3);
    expect(log.get(6)).toBeUndefined();
  });

  it('notifies subscribers synchronously after each append; a throwing subscriber breaks nothing', () => {
    const log = createMemoryLog();
    const seen: number[] = [];
    log.subscribe(() => {
      throw new Error('broken view');
    });
    const off = log.subscribe((e) => seen.push(e.seq));
    log.append(start('a'));
    off();
    log.append(start('b'));
    expect(seen).toEqual([1]);
    expect(log.lastSeq).toBe(2);
  });

  it('resumes from replayed events, continuing their seq, and refuses a gap', () => {
    const first = createMemoryLog();
    first.append(start('a'));
    first.append(start('b'));
    const resumed = createMemoryLog({ initial: first.events() });
    expect(resumed.append(start('c')).seq).toBe(3);
    const gap = [{ ...first.events()[0]!, seq: 2 }] as LogEvent[];
    expect(() => createMemoryLog({ initial: gap })).toThrow(/expected seq 1/);
  });

  it('hands each appended event to its sink (a file, a server)', () => {
    const written: LogEvent[] = [];
    const log = createMemoryLog({ sink: { write: (e) => written.push(e) } });
    log.append(start('a'));
    expect(written.map((e) => e.seq)).toEqual([1]);
  });
});
