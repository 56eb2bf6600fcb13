import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createJsonlLogSink,
  JsonlLogError,
  openJsonlSessionLog,
  readJsonlLog,
  replayJsonlLog,
} from '../../../src/adapters/log/jsonlLog.js';
import type { NewLogEvent } from '../../../src/protocol/index.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import { createMemoryLog } from '../../../src/runtime/log/sessionLog.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function logPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-jsonl-'));
  dirs.push(dir);
  return join(dir, 'session.jsonl');
}

/** One small turn: a step with two calls (one failing) and an answer. */
function turnEvents(turnId = 'turn-1'): NewLogEvent[] {
  const ok = { callId: 'c0', toolName: 'read', isError: false, content: 'héllo 😀\n中文', value: { lines: ['a', 'b'] }, metadata: {} };
  const err = {
    callId: 'c1',
    toolName: 'nope',
    isError: true,
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
