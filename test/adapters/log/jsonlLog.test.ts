import { appendFile, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createJsonlLogSink,
  JsonlLogError,
  openJsonlSessionLog,
  readJsonlLog,
  replayJsonlLog,
  validateLogEvent,
} from '../../../src/adapters/log/jsonlLog.js';
import { crc32c } from '../../../src/adapters/log/crc32c.js';
import { LogEventSchema, type NewLogEvent } from '../../../src/protocol/index.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import { createMemoryLog } from '../../../src/runtime/log/sessionLog.js';
import { tempDir } from '../workspaceFixture.js';

async function logPath(): Promise<string> {
  return join(await tempDir('dsh-jsonl-'), 'session.jsonl');
}

/** One small turn: a step with two calls (one failing) and an answer. */
function turnEvents(turnId = 'turn-1'): NewLogEvent[] {
  const ok = { callId: 'c0', toolName: 'read', isError: false as const, content: 'héllo 😀\n中文', value: { lines: ['a', 'b'] }, metadata: {} };
  const err = {
    callId: 'c1',
    toolName: 'nope',
    isError: true as const,
    error: { name: 'UnknownToolError', code: 'UNKNOWN_TOOL' as const, message: 'unknown tool "nope"' },
    content: 'UNKNOWN_TOOL: unknown tool "nope"',
    metadata: {},
  };
  return [
    { type: 'turn/start', turnId, input: 'read it' },
    { type: 'step/start', turnId, stepIndex: 0 },
    { type: 'llm/stream', turnId, stepIndex: 0, kind: 'text', text: 'Reading.' },
    { type: 'tool/call', turnId, stepIndex: 0, callId: 'c0', toolName: 'read', input: '{"path":"a"}', index: 0, executionMode: 'parallel' },
    { type: 'tool/call', turnId, stepIndex: 0, callId: 'c1', toolName: 'nope', input: '{}', index: 1, executionMode: 'parallel' },
    { type: 'tool/result', turnId, stepIndex: 0, callId: 'c0', toolName: 'read', sourceEventSeqs: [4], result: ok },
    { type: 'tool/result', turnId, stepIndex: 0, callId: 'c1', toolName: 'nope', sourceEventSeqs: [5], result: err },
    { type: 'step/end', turnId, stepIndex: 0, finishReason: 'tool-calls', toolCalls: 2 },
    { type: 'turn/end', turnId, outcome: 'completed', steps: 1 },
  ];
}

describe('JSONL session log', () => {
  it('round trip: what the session appended is what replay returns, event for event', async () => {
    const path = await logPath();
    const sink = createJsonlLogSink({ path });
    const log = createMemoryLog({ clock: new ManualClock(1000), sink });
    for (const e of turnEvents()) log.append(e);
    await sink.close();
    expect(sink.durableSeq).toBe(9);

    const { events, lastSeq, torn } = await readJsonlLog(path);
    expect(torn).toBeUndefined();
    expect(lastSeq).toBe(9);
    expect(events).toEqual(log.events());
    const text = await readFile(path, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(text.trimEnd().split('\n')).toHaveLength(9);
    // Each line: its CRC-32C (8 lowercase hex digits), a space, the event's JSON.
    for (const line of text.trimEnd().split('\n')) {
      const [, crc, json] = /^([0-9a-f]{8}) (\{.*\})$/.exec(line)!;
      expect(parseInt(crc!, 16)).toBe(crc32c(Buffer.from(json!, 'utf8')));
    }
  });

  it('a log written before lines had checksums still replays, and resuming it appends lines with checksums', async () => {
    const path = await logPath();
    const old = createMemoryLog({ clock: new ManualClock(5) });
    for (const e of turnEvents()) old.append(e);
    await writeFile(path, old.events().map((e) => JSON.stringify(e) + '\n').join(''));
    expect((await readJsonlLog(path)).events).toEqual(old.events());

    const resumed = await openJsonlSessionLog(path);
    for (const e of turnEvents('turn-2')) resumed.log.append(e);
    await resumed.sink.close();
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => l[0] === '{')).toEqual([...Array(9).fill(true), ...Array(9).fill(false)]);
    expect((await readJsonlLog(path)).lastSeq).toBe(18);
    // The other way round (a line without a checksum after lines with one) is reported.
    await appendFile(path, JSON.stringify({ type: 'turn/start', turnId: 't3', input: 'x', seq: 19, time: 0 }) + '\n');
    await expect(readJsonlLog(path)).rejects.toMatchObject({ code: 'MISSING_CHECKSUM', line: 19 });
  });

  it('group commit: a burst of commit points shares write+fsync groups, and flush makes everything durable', async () => {
    const path = await logPath();
    const sink = createJsonlLogSink({ path });
    const log = createMemoryLog({ sink });
    for (let t = 1; t <= 50; t++) for (const e of turnEvents(`turn-${t}`)) log.append(e);
    // 50 turns hold 200 commit points; they were appended in one burst.
    await sink.flush();
    expect(sink.durableSeq).toBe(450);
    expect(sink.commits).toBeLessThan(10);
    // Events that are not commit points wait in the buffer until the next commit point or flush.
    log.append({ type: 'turn/start', turnId: 'turn-51', input: 'more' });
    expect(sink.durableSeq).toBe(450);
    await sink.close();
    expect(sink.durableSeq).toBe(451);
    expect(() => sink.write(log.events().at(-1)!)).toThrow(/closed/);
    expect((await readJsonlLog(path)).lastSeq).toBe(451);
  });

  it('whenDurable: undefined once an event is durable, else starts a commit and resolves when it is; a resumed log\'s replayed events are durable', async () => {
    const path = await logPath();
    const first = await openJsonlSessionLog(path);
    first.log.append({ type: 'turn/start', turnId: 't', input: 'go' }); // not a commit point
    expect(first.sink.durableSeq).toBe(0);
    const wait = first.log.whenDurable!(1);
    expect(wait).toBeInstanceOf(Promise);
    await wait;
    expect(first.sink.durableSeq).toBe(1);
    expect((await readJsonlLog(path)).lastSeq).toBe(1);
    expect(first.log.whenDurable!(1)).toBeUndefined();
    await first.sink.close();
    const second = await openJsonlSessionLog(path);
    expect(second.log.whenDurable!(second.log.lastSeq)).toBeUndefined();
    await second.sink.close();
  });

  it('a torn last line is reported, not thrown; the events before it are replayed; repair cuts it off', async () => {
    const path = await logPath();
    const sink = createJsonlLogSink({ path });
    const log = createMemoryLog({ sink });
    for (const e of turnEvents()) log.append(e);
    await sink.close();
    const whole = (await stat(path)).size;
    // A crash in the middle of the next group write: half a line, no newline.
    await appendFile(path, '{"type":"turn/start","turnId":"turn-2","inp');

    const first = await readJsonlLog(path);
    expect(first.events).toHaveLength(9);
    expect(first.torn).toMatchObject({ line: 10, offset: whole, bytes: 43, repaired: false });
    expect(first.torn!.message).toMatch(/torn last line/);
    expect((await stat(path)).size).toBe(whole + 43);

    const repaired = await readJsonlLog(path, { repair: true });
    expect(repaired.torn).toMatchObject({ repaired: true });
    expect((await stat(path)).size).toBe(whole);
    expect((await readJsonlLog(path)).torn).toBeUndefined();
  });

  it('a seq gap (a lost or reordered line) is a clear error naming the line', async () => {
    const path = await logPath();
    const sink = createJsonlLogSink({ path });
    const log = createMemoryLog({ sink });
    for (const e of turnEvents()) log.append(e);
    await sink.close();
    const lines = (await readFile(path, 'utf8')).split('\n');
    lines.splice(4, 1); // drop seq 5
    await writeFile(path, lines.join('\n'));

    const seen: number[] = [];
    const error = await replayJsonlLog(path, (e) => seen.push(e.seq)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JsonlLogError);
    expect(error).toMatchObject({ code: 'SEQ_GAP', line: 5 });
    expect((error as Error).message).toMatch(/:5: SEQ_GAP: expected seq 5, found 6/);
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  it('a line that is not a log event fails validation with its line number', async () => {
    const path = await logPath();
    await writeFile(path, '{"type":"turn/start","turnId":"t","input":"x","seq":1,"time":0}\n{"type":"tool/result","seq":2,"time":0}\n');
    await expect(readJsonlLog(path)).rejects.toMatchObject({ code: 'INVALID_EVENT', line: 2 });
    await writeFile(path, '{"type":"turn/start","turnId":"t","input":"x","seq":1,"time":0}\nnot json\n{}\n');
    await expect(readJsonlLog(path)).rejects.toMatchObject({ code: 'MALFORMED_LINE', line: 2 });
    await writeFile(path, '{"type":"turn/start","turnId":"t","input":"x","seq":1,"time":0}\n{not json\n{}\n');
    await expect(readJsonlLog(path)).rejects.toMatchObject({ code: 'INVALID_JSON', line: 2 });
  });

  it('openJsonlSessionLog resumes a session: replays, repairs a torn tail, appends after the last seq', async () => {
    const path = await logPath();
    const first = await openJsonlSessionLog(path);
    for (const e of turnEvents()) first.log.append(e);
    await first.sink.close();
    await appendFile(path, '{"seq":10,"ty');

    const second = await openJsonlSessionLog(path);
    expect(second.torn).toMatchObject({ repaired: true, line: 10 });
    expect(second.log.lastSeq).toBe(9);
    second.log.append({ type: 'turn/start', turnId: 'turn-2', input: 'again' });
    await second.sink.close();
    const { events, torn } = await readJsonlLog(path);
    expect(torn).toBeUndefined();
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(events.at(-1)).toMatchObject({ type: 'turn/start', turnId: 'turn-2' });
  });
});

/** One valid event of every type, with every optional field somewhere. */
function everyEventType(): Array<Record<string, unknown>> {
  const base = { seq: 1, time: 1.5 };
  const result = { callId: 'c', toolName: 't', isError: true, error: { name: 'E', code: 'UNKNOWN_TOOL', message: 'm' }, content: 'x', value: [1, { a: null }], metadata: { k: { deep: [1] } } };
  return [
    { ...base, type: 'turn/start', turnId: 't', input: 'hi' },
    { ...base, type: 'step/start', turnId: 't', stepIndex: 0 },
    { ...base, type: 'llm/stream', turnId: 't', stepIndex: 1, kind: 'reasoning', text: 'hm' },
    { ...base, type: 'tool/call', turnId: 't', stepIndex: 0, callId: 'c', toolName: 'read', input: { path: 'a' }, index: 0, executionMode: 'exclusive' },
    { ...base, type: 'tool/call', callId: 'c', toolName: 'read', input: null, index: 2, executionMode: 'parallel' },
    { ...base, type: 'tool/result', turnId: 't', stepIndex: 0, callId: 'c', toolName: 'read', sourceEventSeqs: [1, 2], result },
    { ...base, type: 'tool/result', callId: 'c', toolName: 'read', sourceEventSeqs: [3], result: { callId: 'c', toolName: 't', isError: false, content: '', metadata: {} } },
    { ...base, type: 'step/end', turnId: 't', stepIndex: 0, finishReason: 'stop', toolCalls: 0 },
    { ...base, type: 'turn/end', turnId: 't', outcome: 'failed', steps: 1, error: 'boom' },
    { ...base, type: 'agent/request-error', turnId: 't', stepIndex: 0, attempt: 1, kind: 'retryable', status: 529, message: 'busy', action: 'retry', delayMs: 0 },
    { ...base, type: 'context/compacted', turnId: 't', strategy: 's', stubbedSeqs: [], beforeChars: 10, afterChars: 0 },
    { ...base, type: 'tool/approval-request', turnId: 't', callId: 'c', toolName: 'bash', reason: 'why' },
    { ...base, type: 'tool/approval-answer', callId: 'c', answer: 'allowed-once' },
    { ...base, type: 'tool/approval-answer', callId: 'c', answer: 'timeout' },
    { ...base, type: 'hook/failed', callId: 'c', hook: 'tools/guard', listener: 'l', message: 'm', failed: 'closed' },
    { ...base, type: 'warning', code: 'W', message: 'm', data: { bytes: 3 } },
    { ...base, type: 'tool/spilled', callId: 'c', locator: '/x', bytes: 0, lines: 0 },
  ];
}

/** A JSON value as replay would see it: the event with one random change at a random place. */
function mutate(event: Record<string, unknown>, pathPick: number, action: number, replacement: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(event)) as Record<string, unknown>;
  // Every object or array in the event, and each one's keys.
  const holders: Array<Record<string, unknown> | unknown[]> = [];
  const walk = (v: unknown) => {
    if (typeof v === 'object' && v !== null) {
      holders.push(v as Record<string, unknown>);
      for (const x of Object.values(v)) walk(x);
    }
  };
  walk(copy);
  const holder = holders[pathPick % holders.length]!;
  const keys = Object.keys(holder);
  const key = Array.isArray(holder) ? String(action % (holder.length + 1)) : keys.length ? keys[action % keys.length]! : 'extra';
  switch (action % 4) {
    case 0:
      (holder as Record<string, unknown>)[key] = replacement;
      break;
    case 1:
      if (Array.isArray(holder)) holder.splice(Number(key), 1);
      else delete holder[key];
      break;
    case 2:
      (holder as Record<string, unknown>)[`${key}_extra`] = replacement;
      break;
    default:
      // An own "__proto__" key, as JSON.parse makes it.
      Object.defineProperty(holder, '__proto__', { value: replacement, enumerable: true, configurable: true, writable: true });
  }
  return JSON.parse(JSON.stringify(copy));
}

describe('replay validation', () => {
  it('the compiled fast path accepts every valid event as it is, and zod agrees with its output', () => {
    for (const e of everyEventType()) {
      const value = JSON.parse(JSON.stringify(e)) as unknown;
      const r = validateLogEvent(value);
      const z = LogEventSchema.safeParse(value);
      expect(z.success).toBe(true);
      expect(r.success).toBe(true);
      expect(r.success && r.data).toBe(value); // the fast path: no copy
      expect(r.success && r.data).toStrictEqual(z.data);
    }
  });

  it('has the same verdict, output and first issue as LogEventSchema.safeParse for any mutation of a valid event', () => {
    const seeds = everyEventType();
    fc.assert(
      fc.property(
        fc.nat(seeds.length - 1),
        fc.array(
          fc.tuple(
            fc.nat(100),
            fc.nat(100),
            fc.oneof(fc.jsonValue(), fc.constantFrom(-1, 0, 1, 1.5, 2 ** 53, 1e400, '', 'tool/call', 'parallel', 'UNKNOWN_TOOL', 'denied', null, [], [0], {}, true)),
          ),
          { minLength: 1, maxLength: 3 },
        ),
        (i, changes) => {
          let value: unknown = seeds[i]!;
          for (const [pathPick, action, replacement] of changes) value = mutate(value as Record<string, unknown>, pathPick, action, replacement);
          const r = validateLogEvent(value);
          const z = LogEventSchema.safeParse(value);
          expect(r.success).toBe(z.success);
          if (r.success && z.success) expect(r.data).toStrictEqual(z.data);
          if (!r.success && !z.success) expect(r.error.issues[0]).toEqual(z.error.issues[0]);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('reports what zod would drop (an unknown key, an own __proto__ key) instead of dropping it; a number JSON cannot hold is an invalid event', async () => {
    const path = await logPath();
    await writeFile(path, '{"type":"turn/start","turnId":"t","input":"x","seq":1,"time":0,"extra":{"a":1}}\n');
    await expect(readJsonlLog(path)).rejects.toThrow(/:1: INVALID_EVENT: extra: unknown key "extra"/);
    await writeFile(path, '{"type":"turn/start","turnId":"t","input":"x","seq":1,"time":0,"__proto__":{"a":1}}\n');
    await expect(readJsonlLog(path)).rejects.toThrow(/:1: INVALID_EVENT: __proto__: unknown key "__proto__"/);
    const nested = { type: 'tool/result', callId: 'c', toolName: 't', sourceEventSeqs: [1], result: { callId: 'c', toolName: 't', isError: false, content: '', metadata: {}, sneaky: 1 }, seq: 1, time: 0 };
    await writeFile(path, JSON.stringify(nested) + '\n');
    await expect(readJsonlLog(path)).rejects.toThrow(/:1: INVALID_EVENT: result\.sneaky: unknown key "sneaky"/);
    await writeFile(path, '{"type":"turn/start","turnId":"t","input":"x","seq":1,"time":1e400}\n');
    await expect(readJsonlLog(path)).rejects.toMatchObject({ code: 'INVALID_EVENT', line: 1 });
    await writeFile(path, '{"type":"turn/start","turnId":"t","input":"x","seq":1,"time":0}\n{"type":"step/start","turnId":"t","stepIndex":-1,"seq":2,"time":0}\n');
    await expect(readJsonlLog(path)).rejects.toThrow(/:2: INVALID_EVENT: stepIndex: /);
  });
});

describe('replay of a large log', () => {
  it('lines that straddle reads (one longer than a whole read, multi-byte characters on the edges) replay exactly; line numbers and the torn offset stay true', async () => {
    const path = await logPath();
    const sink = createJsonlLogSink({ path, fsync: false });
    const log = createMemoryLog({ clock: new ManualClock(0), sink });
    // Reads are 4 MiB: about 10 MiB of lines of many lengths, and one line of 5 MiB.
    let chars = 0;
    for (let i = 0; chars < 10 * 2 ** 20; i++) {
      const text = i === 7000 ? '中😀'.repeat(900_000) : 'é😀中x'.repeat(i % 997) + `#${i}`;
      chars += text.length;
      log.append({ type: 'llm/stream', turnId: 't', stepIndex: 0, kind: 'text', text });
    }
    await sink.close();
    const size = (await stat(path)).size;
    await appendFile(path, '{"type":"turn/start"');

    const lines: number[] = [];
    const seen: unknown[] = [];
    const r = await replayJsonlLog(path, (e) => {
      seen.push(e);
      lines.push(e.seq);
    });
    expect(r.events).toBe(log.events().length);
    expect(seen).toEqual(log.events());
    expect(r.torn).toMatchObject({ line: log.events().length + 1, offset: size, bytes: 20 });

    // A bad line deep in the file is reported with its own line number.
    const text = await readFile(path, 'utf8');
    const bad = text.split('\n');
    expect(bad.length).toBeGreaterThan(3001);
    bad[3000] = bad[3000]!.replace('"kind":"text"', '"kind":"speech"');
    await writeFile(path, bad.join('\n'));
    await expect(replayJsonlLog(path, () => undefined)).rejects.toMatchObject({ code: 'CHECKSUM_MISMATCH', line: 3001 });
  });
});
