/**
 * W6 log: JSONL append with group commit (write+fsync at commit points) in events/s, and the
 * validated streaming replay of a large log in events/s.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checksumHex, crc32cOfUtf8 } from '../../src/adapters/log/crc32c.js';
import { createJsonlLogSink, replayJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { nowMs } from '../lib/stats.js';

/** The events of one turn of N = 8 (24 events), stamped from `seq`. */
function turnEvents(t: number, seq: number): LogEvent[] {
  const turnId = `turn-${t}`;
  const time = 1_764_000_000_000 + seq;
  const out: Array<Record<string, unknown>> = [
    { type: 'turn/start', turnId, input: 'read the eight files and summarise them' },
    { type: 'step/start', turnId, stepIndex: 0 },
    { type: 'llm/stream', turnId, stepIndex: 0, kind: 'text', text: 'I will read the files first.' },
  ];
  for (let i = 0; i < 8; i++) {
    out.push({ type: 'tool/call', turnId, stepIndex: 0, callId: `call-${t}-${i}`, toolName: 'read', input: `{"path":"src/file-${i}.ts"}`, index: i, executionMode: 'parallel' });
  }
  for (let i = 0; i < 8; i++) {
    const content = `export const value${i} = ${i};\n// file ${i} of turn ${t}: a short tool output of about a hundred characters\n`;
    out.push({
      type: 'tool/result',
      turnId,
      stepIndex: 0,
      callId: `call-${t}-${i}`,
      toolName: 'read',
      sourceEventSeqs: [seq + 3 + i],
      result: { callId: `call-${t}-${i}`, toolName: 'read', isError: false, content, value: content, metadata: {} },
    });
  }
  out.push(
    { type: 'step/end', turnId, stepIndex: 0, finishReason: 'tool-calls', toolCalls: 8 },
    { type: 'step/start', turnId, stepIndex: 1 },
    { type: 'llm/stream', turnId, stepIndex: 1, kind: 'text', text: 'All eight files export one constant each.' },
    { type: 'step/end', turnId, stepIndex: 1, finishReason: 'stop', toolCalls: 0 },
    { type: 'turn/end', turnId, outcome: 'completed', steps: 2 },
  );
  return out.map((e, i) => ({ ...e, seq: seq + i, time: time + i }) as unknown as LogEvent);
}
const PER_TURN = turnEvents(1, 1).length;

export interface W6Result {
  appendEventsPerSec: number;
  replayEventsPerSec: number;
}
export interface W6Detail {
  appendEvents: number;
  commits: number;
  commitPoints: number;
  replayEvents: number;
  replayMiB: number;
  /** Reference: the whole file read at once, then `JSON.parse` of each line; no validation, no checks. */
  parseOnlyEventsPerSec: number;
}

/**
 * The least any replay of the file must do: read it and JSON.parse every line's event (after its
 * 9-byte checksum prefix, which is not checked here). Returns the line count.
 */
async function parseEveryLine(path: string): Promise<number> {
  const text = (await readFile(path)).toString('latin1'); // the bench's log is ASCII
  let lines = 0;
  for (let start = 0, nl = text.indexOf('\n'); nl !== -1; start = nl + 1, nl = text.indexOf('\n', start)) {
    JSON.parse(text.slice(start + 9, nl));
    lines++;
  }
  return lines;
}

export async function runW6(opts: { quick: boolean; log: (s: string) => void }): Promise<{ result: W6Result; detail: W6Detail }> {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-bench-w6-'));
  try {
    // Append: events arrive as a session produces them (each commit point in its own macrotask),
    // every commit point asks for durability; the clock stops when the last event is fsynced.
    const appendTurns = opts.quick ? 2_000 : 10_000;
    const turns: LogEvent[][] = [];
    for (let t = 0, seq = 1; t < appendTurns; t++, seq += PER_TURN) turns.push(turnEvents(t + 1, seq));
    const sink = createJsonlLogSink({ path: join(dir, 'append.jsonl') });
    const yieldNow = () => new Promise<void>((r) => setImmediate(r));
    let commitPoints = 0;
    const t0 = nowMs();
    for (const events of turns) {
      for (const e of events) {
        sink.write(e);
        if (e.type === 'tool/result' || e.type === 'step/end' || e.type === 'turn/end') {
          commitPoints++;
          await yieldNow();
        }
      }
    }
    await sink.close();
    const appendMs = nowMs() - t0;
    const appendEvents = appendTurns * PER_TURN;

    // Replay: a large log written without fsync (setup, not measured), then read back.
    const replayTurns = Math.ceil((opts.quick ? 200_000 : 1_000_000) / PER_TURN);
    const replayPath = join(dir, 'replay.jsonl');
    const out = createWriteStream(replayPath);
    let chunk: string[] = [];
    for (let t = 0, seq = 1; t < replayTurns; t++, seq += PER_TURN) {
      // As the sink writes them: the line's CRC-32C, a space, the event's JSON.
      for (const e of turnEvents(t + 1, seq)) {
        const json = JSON.stringify(e);
        chunk.push(`${checksumHex(crc32cOfUtf8(json))} ${json}`);
      }
      if (chunk.length >= 20_000 || t === replayTurns - 1) {
        if (!out.write(chunk.join('\n') + '\n')) await new Promise<void>((r) => out.once('drain', () => r()));
        chunk = [];
      }
    }
    await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
    const replayEvents = replayTurns * PER_TURN;
    const bytes = (await stat(replayPath)).size;
    opts.log(`  w6 replaying ${replayEvents} events (${(bytes / 2 ** 20).toFixed(0)} MiB)`);
    // Alternated with the reference (JSON.parse of every line of the same file, nothing else), so
    // both see the same machine; best of the repetitions for each, as for any throughput on a
    // machine whose speed drifts.
    let replayMs = Infinity;
    let parseOnlyMs = Infinity;
    for (let rep = 0; rep < (opts.quick ? 1 : 2); rep++) {
      let seen = 0;
      const r0 = nowMs();
      const r = await replayJsonlLog(replayPath, () => void seen++);
      replayMs = Math.min(replayMs, nowMs() - r0);
      if (r.events !== replayEvents || seen !== replayEvents || r.torn) throw new Error(`replay read ${r.events} of ${replayEvents} events`);
      const p0 = nowMs();
      const parsed = await parseEveryLine(replayPath);
      parseOnlyMs = Math.min(parseOnlyMs, nowMs() - p0);
      if (parsed !== replayEvents) throw new Error(`parse-only read ${parsed} of ${replayEvents} lines`);
    }

    return {
      result: { appendEventsPerSec: appendEvents / (appendMs / 1000), replayEventsPerSec: replayEvents / (replayMs / 1000) },
      detail: { appendEvents, commits: sink.commits, commitPoints, replayEvents, replayMiB: bytes / 2 ** 20, parseOnlyEventsPerSec: replayEvents / (parseOnlyMs / 1000) },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
