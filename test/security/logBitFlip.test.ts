/**
 * Issue 10 item 9: the session log must not accept corruption silently. Every single-bit flip of
 * a valid JSONL log (as the sink writes it) is replayed: each must be reported, on the line of the
 * flipped bit, with none of that line's content replayed: an error naming the line (a flip in the
 * checksum, its separator, the JSON or a newline), or, for the last newline, a torn last line.
 * Then random flips of a larger log through the parallel replay (the reader thread checks the
 * checksums of the runs it offers as arrays), which must give the same verdicts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createJsonlLogSink, JsonlLogError, replayJsonlLog, type ReplayOptions } from '../../src/adapters/log/jsonlLog.js';
import type { NewLogEvent } from '../../src/protocol/index.js';
import { ManualClock } from '../../src/runtime/clock.js';
import { createMemoryLog } from '../../src/runtime/log/sessionLog.js';
import { tempDir } from '../adapters/workspaceFixture.js';

/** A turn with every common event type, ASCII and not. */
function session(turns: number): NewLogEvent[] {
  const events: NewLogEvent[] = [];
  for (let t = 1; t <= turns; t++) {
    const turnId = `turn-${t}`;
    const ok = { callId: `c${t}`, toolName: 'read', isError: false as const, content: 'héllo 😀 中文\n\t"quoted" \\', value: { lines: ['a', 'b'] }, metadata: {} };
    events.push(
      { type: 'turn/start', turnId, input: 'read it' },
      { type: 'step/start', turnId, stepIndex: 0 },
      { type: 'tool/call', turnId, stepIndex: 0, callId: `c${t}`, toolName: 'read', input: '{"path":"a"}', index: 0, executionMode: 'parallel' },
      { type: 'tool/result', turnId, stepIndex: 0, callId: `c${t}`, toolName: 'read', sourceEventSeqs: [events.length + 3], result: ok },
      { type: 'step/end', turnId, stepIndex: 0, finishReason: 'tool-calls', toolCalls: 1 },
      { type: 'turn/end', turnId, outcome: 'completed', steps: 1 },
    );
  }
  return events;
}

async function writeValidLog(path: string, turns: number): Promise<Buffer> {
  const sink = createJsonlLogSink({ path, fsync: false });
  const log = createMemoryLog({ clock: new ManualClock(1_764_000_000_000), sink });
  for (const e of session(turns)) log.append(e);
  await sink.close();
  return readFileSync(path);
}

type Verdict = { kind: 'error'; code: string; line: number; replayed: number } | { kind: 'torn'; line: number; replayed: number } | { kind: 'accepted'; replayed: number };

async function verdict(path: string, options: ReplayOptions): Promise<Verdict> {
  let replayed = 0;
  try {
    const r = await replayJsonlLog(path, () => replayed++, options);
    return r.torn ? { kind: 'torn', line: r.torn.line, replayed } : { kind: 'accepted', replayed };
  } catch (e) {
    if (!(e instanceof JsonlLogError)) throw e;
    return { kind: 'error', code: e.code, line: e.line, replayed };
  }
}

/** 1-based line of each byte. */
function lineOfEachByte(bytes: Buffer): number[] {
  const lines: number[] = [];
  let line = 1;
  for (const b of bytes) {
    lines.push(line);
    if (b === 10) line++;
  }
  return lines;
}

const LINE_BY_LINE: ReplayOptions = {};

describe('a bit flipped anywhere in a JSONL log is reported with its line', () => {
  it('every single-bit flip of a valid log: 0 accepted, each reported on its own line before any of it is replayed', async () => {
    const dir = await tempDir('dsh-bitflip-');
    const good = await writeValidLog(join(dir, 'session.jsonl'), 1);
    const lineOf = lineOfEachByte(good);
    expect(await verdict(join(dir, 'session.jsonl'), LINE_BY_LINE)).toEqual({ kind: 'accepted', replayed: 6 });

    const byCode = new Map<string, number>();
    const wrong: string[] = [];
    const flips = Array.from({ length: good.length * 8 }, (_, i) => i);
    // 32 files at a time: a replay mostly waits for its reads.
    const lanes = 32;
    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        const path = join(dir, `flipped-${lane}.jsonl`);
        for (let f = lane; f < flips.length; f += lanes) {
          const at = f >> 3;
          const bytes = Buffer.from(good);
          bytes[at]! ^= 1 << (f & 7);
          writeFileSync(path, bytes);
          const v = await verdict(path, LINE_BY_LINE);
          const line = lineOf[at]!;
          const reported = v.kind !== 'accepted' && v.line === line && v.replayed === line - 1;
          if (!reported) wrong.push(`byte ${at} bit ${f & 7} (line ${line}): ${JSON.stringify(v)}`);
          const key = v.kind === 'error' ? v.code : v.kind;
          byCode.set(key, (byCode.get(key) ?? 0) + 1);
        }
      }),
    );
    expect(wrong).toEqual([]);
    if (process.env.DSH_BITFLIP_TALLY) console.log(flips.length, JSON.stringify([...byCode]));
    expect(byCode.get('accepted')).toBeUndefined();
    // Flips in the checksum's hex digits: another digit (a mismatch) or not one (malformed).
    expect(byCode.get('CHECKSUM_MISMATCH')).toBeGreaterThan(good.length * 4);
    expect(byCode.get('MALFORMED_LINE')).toBeGreaterThan(0);
    expect(byCode.get('torn')).toBe(8); // the last newline: the last line is torn, and reported
  }, 120_000);

  it('random flips (one or several bits) of a larger log: reported on the first flipped line, none accepted', async () => {
    const dir = await tempDir('dsh-bitflip-par-');
    const source = join(dir, 'session.jsonl');
    const good = await writeValidLog(source, 40);
    const lineOf = lineOfEachByte(good);
    const path = join(dir, 'flipped.jsonl');
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.nat(good.length * 8 - 1), { minLength: 1, maxLength: 3 }), async (bits) => {
        const bytes = Buffer.from(good);
        for (const b of bits) bytes[b >> 3]! ^= 1 << (b & 7);
        writeFileSync(path, bytes);
        const alone = await verdict(path, LINE_BY_LINE);
        const first = Math.min(...bits.map((b) => lineOf[b >> 3]!));
        expect(alone.kind).not.toBe('accepted');
        if (alone.kind !== 'accepted') expect([alone.line, alone.replayed]).toEqual([first, first - 1]);
      }),
      { numRuns: 25, seed: 20261130 },
    );
  }, 120_000);
});
