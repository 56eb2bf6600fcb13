/**
 * The replay of large logs with a reader thread (jsonlLogWorker.ts) must be indistinguishable
 * from the line-by-line replay: same events in the same order, same result and torn tail, same
 * error (code, line, message) after the same events. Here every file is replayed both ways, the
 * parallel one with tiny blocks and runs so that lines cross every kind of boundary.
 */
import { spawnSync } from 'node:child_process';
import { copyFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checksumHex, crc32cOfUtf8 } from '../../../src/adapters/log/crc32c.js';
import { JsonlLogError, replayJsonlLog, type ReplayOptions } from '../../../src/adapters/log/jsonlLog.js';
import { LogEventSchema } from '../../../src/protocol/index.js';
import { tempDir } from '../workspaceFixture.js';


/**
 * Tiny blocks and runs: many blocks, runs of a few lines, lines longer than a block; and the
 * worker replays the whole file (this thread does not start alone while it starts up).
 */
const SMALL = { blockBytes: 4096, firstBlockBytes: 300, runBytes: 700, slots: 2, aloneReadBytes: 0 };

/** A line as the sink writes it: the JSON's CRC-32C, a space, the JSON. */
const checksummed = (json: string) => `${checksumHex(crc32cOfUtf8(json))} ${json}`;

/**
 * Valid events, as the lines a sink writes (`legacy`: as it wrote them before lines had
 * checksums): ASCII and not, short and long, nested inputs.
 */
function eventLines(count: number, firstSeq = 1, legacy = false): string[] {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const seq = firstSeq + i;
    const turnId = `turn-${Math.floor(i / 7)}`;
    let event: Record<string, unknown>;
    switch (i % 7) {
      case 0:
        event = { type: 'turn/start', turnId, input: i % 3 ? 'read it' : 'lire «ça» 😀 中文 \\ "quoted" \n next' };
        break;
      case 1:
        event = { type: 'step/start', turnId, stepIndex: 0 };
        break;
      case 2:
        event = { type: 'llm/stream', turnId, stepIndex: 0, kind: 'text', text: i % 50 === 2 ? 'x{[",\\'.repeat(2000) : `chunk ${i}, with {braces} and [brackets]` };
        break;
      case 3:
        event = { type: 'tool/call', turnId, stepIndex: 0, callId: `c${i}`, toolName: 'read', input: { path: `a/${i}.ts`, deep: [[1], [2, { x: '}' }]] }, index: 0, executionMode: 'parallel' };
        break;
      case 4:
        event = {
          type: 'tool/result',
          turnId,
          stepIndex: 0,
          callId: `c${i - 1}`,
          toolName: 'read',
          sourceEventSeqs: [seq - 1],
          result: { callId: `c${i - 1}`, toolName: 'read', isError: false, content: 'é😀中\n'.repeat(i % 5), value: { lines: ['a', 'b'] }, metadata: {} },
        };
        break;
      case 5:
        event = { type: 'step/end', turnId, stepIndex: 0, finishReason: 'stop', toolCalls: 1 };
        break;
      default:
        event = { type: 'turn/end', turnId, outcome: 'completed', steps: 1 };
    }
    const line = JSON.stringify({ ...event, seq, time: 1_764_000_000_000 + seq });
    expect(LogEventSchema.safeParse(JSON.parse(line)).success).toBe(true);
    lines.push(legacy ? line : checksummed(line));
  }
  return lines;
}

type Outcome =
  | { ok: true; events: unknown[]; result: unknown; bytesAfter: number }
  | { ok: false; events: unknown[]; code: string; line: number; message: string; bytesAfter: number };

/** Replays a copy of the file (repair may cut it) and records all that can be observed. */
async function outcome(source: string, options: ReplayOptions): Promise<Outcome> {
  const path = join(await tempDir('dsh-jsonl-par-'), 'copy.jsonl');
  await copyFile(source, path);
  const events: unknown[] = [];
  try {
    const result = await replayJsonlLog(path, (e) => events.push(e), options);
    return { ok: true, events, result: { ...result, torn: result.torn && { ...result.torn, message: result.torn.message.replace(path, '<path>') } }, bytesAfter: (await stat(path)).size };
  } catch (e) {
    if (!(e instanceof JsonlLogError)) throw e;
    return { ok: false, events, code: e.code, line: e.line, message: e.message.replace(path, '<path>'), bytesAfter: (await stat(path)).size };
  }
}

/** Replays the file both ways; expects the same outcome and returns it with the parallel replay's stats. */
async function bothWays(path: string, options: ReplayOptions = {}) {
  const alone = await outcome(path, { ...options, parallelMinBytes: Infinity });
  const stats = { arrayRuns: 0, lineRuns: 0, workerFailed: false };
  const parallel = await outcome(path, { ...options, parallelMinBytes: 0, parallelChunking: SMALL, parallelStats: stats });
  expect(parallel).toEqual(alone);
  expect(stats.workerFailed).toBe(false);
  return { outcome: alone, stats };
}

async function writeLog(text: string | Buffer): Promise<string> {
  const path = join(await tempDir('dsh-jsonl-par-'), 'session.jsonl');
  await writeFile(path, text);
  return path;
}

describe('parallel replay (reader thread)', () => {
  it('gives the same events and result as the line-by-line replay, across blocks, runs and lines longer than a block', async () => {
    const lines = eventLines(600);
    lines.splice(100, 0, ''); // a blank line: nothing, but it counts
    lines[200] += ' '; // JSON whitespace, inside the checksum
    lines[200] = checksummed(lines[200]!.slice(9));
    const path = await writeLog(lines.join('\n') + '\n');
    const { outcome: o, stats } = await bothWays(path);
    expect(o).toMatchObject({ ok: true, result: { events: 600, lastSeq: 600 } });
    expect(o.events.map((e) => (e as { seq: number }).seq)).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
    expect(stats.arrayRuns).toBeGreaterThan(50);
    expect(stats.lineRuns).toBeGreaterThan(0); // the run with the blank line
  });

  it('this thread replays the start of the file alone while the worker starts, then hands over where it got to', async () => {
    const lines = eventLines(4000); // about 1 MiB, in reads of 100 bytes: the worker is up long before the end
    const path = await writeLog(lines.join('\n') + '\n');
    const alone = await outcome(path, { parallelMinBytes: Infinity });
    const stats: NonNullable<ReplayOptions['parallelStats']> = { arrayRuns: 0, lineRuns: 0, workerFailed: false };
    const handedOver = await outcome(path, { parallelMinBytes: 0, parallelChunking: { ...SMALL, aloneReadBytes: 100 }, parallelStats: stats });
    expect(handedOver).toEqual(alone);
    expect(stats).toMatchObject({ workerFailed: false });
    expect(stats.arrayRuns).toBeGreaterThan(0);
    expect(stats.workerStart).toBeGreaterThan(0);
  });

  it('the same torn tail, reported or repaired', async () => {
    const lines = eventLines(300, 5);
    const path = await writeLog(lines.join('\n') + '\n{"type":"turn/start","turnId":"t","inp');
    const reported = await bothWays(path, { firstSeq: 5 });
    expect(reported.outcome).toMatchObject({ ok: true, result: { events: 300, lastSeq: 304, torn: { line: 301, bytes: 38, repaired: false } } });
    const repaired = await bothWays(path, { firstSeq: 5, repair: true });
    expect(repaired.outcome).toMatchObject({ ok: true, result: { torn: { repaired: true } }, bytesAfter: (await stat(path)).size - 38 });
    // Only a torn line: no whole line at all.
    expect((await bothWays(await writeLog('{"type":'))).outcome).toMatchObject({ ok: true, result: { events: 0, torn: { line: 1, offset: 0, bytes: 8 } } });
    expect((await bothWays(await writeLog(''))).outcome).toMatchObject({ ok: true, result: { events: 0, lastSeq: 0 } });
  });

  it('reports the same error, line and message after the same events, for every kind of bad line', async () => {
    const at = 250; // index of the line made bad (line 251)
    /** [name, corruption, code with checksums, code in a log written before them]. */
    const cases: Array<[string, (lines: string[]) => void, string, string]> = [
      ['not JSON', (l) => (l[at] = 'not json'), 'MALFORMED_LINE', 'MALFORMED_LINE'],
      ['whitespace only', (l) => (l[at] = '   '), 'MALFORMED_LINE', 'MALFORMED_LINE'],
      ['a torn write followed by appends', (l) => (l[at] = l[at]!.slice(0, 40) + l[at + 1]!), 'CHECKSUM_MISMATCH', 'INVALID_JSON'],
      ['not a log event', (l) => (l[at] = l[at]!.replace(/"seq":\d+/, '"seq":"x"')), 'CHECKSUM_MISMATCH', 'INVALID_EVENT'],
      ['a seq gap', (l) => l.splice(at, 1), 'SEQ_GAP', 'SEQ_GAP'],
      ['two events on one line', (l) => l.splice(at, 2, `${l[at]},${l[at + 1]}`), 'CHECKSUM_MISMATCH', 'INVALID_JSON'],
      ['an event cut inside a string', (l) => l.splice(at, 1, ...l[at]!.split(/(?<="turnId":"tu)/)), 'CHECKSUM_MISMATCH', 'INVALID_JSON'],
      ['an escape before the newline', (l) => (l[at] = l[at]!.replace('"type"', '"ty\\\n') + l[at + 1]), 'CHECKSUM_MISMATCH', 'INVALID_JSON'],
      ['a byte-order mark', (l) => (l[0] = '\uFEFF' + l[0]), 'MALFORMED_LINE', 'MALFORMED_LINE'],
      ['an upper-case checksum', (l) => (l[at] = l[at]!.replace(/^[0-9a-f]{8}/, (h) => (/[a-f]/.test(h) ? h.toUpperCase() : `A${h.slice(1)}`))), 'MALFORMED_LINE', 'MALFORMED_LINE'],
      ['a right checksum of a changed line', (l) => (l[at] = checksummed(l[at]!.slice(l[at]!.indexOf('{')).replace(/"seq":\d+/, '"seq":"x"'))), 'INVALID_EVENT', 'INVALID_EVENT'],
      ['an unknown key under a right checksum', (l) => (l[at] = checksummed(l[at]!.slice(l[at]!.indexOf('{')).replace(/}$/, ',"extra":1}'))), 'INVALID_EVENT', 'INVALID_EVENT'],
    ];
    for (const legacy of [false, true]) {
      const base = eventLines(400, 1, legacy);
      for (const [name, corrupt, code, legacyCode] of cases) {
        if (legacy && name === 'an upper-case checksum') continue;
        const lines = [...base];
        corrupt(lines);
        const { outcome: o } = await bothWays(await writeLog(lines.join('\n') + '\n'));
        expect(o, `${name}${legacy ? ' (before checksums)' : ''}`).toMatchObject({ ok: false, code: legacy ? legacyCode : code });
      }
    }
  });

  it('lines without checksums replay when no line with one came before; after one they are reported', async () => {
    // A log written before checksums, resumed (appended to) since: its old lines, then new ones.
    const mixed = [...eventLines(150, 1, true), ...eventLines(150, 151)];
    const { outcome: ok, stats } = await bothWays(await writeLog(mixed.join('\n') + '\n'));
    expect(ok).toMatchObject({ ok: true, result: { events: 300 } });
    expect(stats.arrayRuns).toBeGreaterThan(10);
    const wrongWay = [...eventLines(150), ...eventLines(150, 151, true)];
    const { outcome: bad } = await bothWays(await writeLog(wrongWay.join('\n') + '\n'));
    expect(bad).toMatchObject({ ok: false, code: 'MISSING_CHECKSUM', line: 151 });
  });

  it('bytes that are not UTF-8 are reported with their line, never decoded to U+FFFD, even under a right checksum', async () => {
    const lines = eventLines(300).map((l) => Buffer.from(l + '\n'));
    const json = Buffer.from('{"type":"turn/start","turnId":"t","input":"caf\u00e9","seq":201,"time":0}');
    const bad = Buffer.from(json.toString('latin1').replace('\u00c3\u00a9', '\u00e9'), 'latin1'); // a lone 0xE9 byte
    expect(bad.length).toBe(json.length - 1);
    const { crc32c } = await import('../../../src/adapters/log/crc32c.js');
    lines[200] = Buffer.concat([Buffer.from(`${checksumHex(crc32c(bad))} `), bad, Buffer.from('\n')]);
    const { outcome: o } = await bothWays(await writeLog(Buffer.concat(lines)));
    expect(o).toMatchObject({ ok: false, code: 'INVALID_UTF8', line: 201 });
    expect(o.events).toHaveLength(200);
    const legacy = eventLines(300, 1, true).map((l) => Buffer.from(l + '\n'));
    legacy[200] = Buffer.concat([bad, Buffer.from('\n')]);
    expect((await bothWays(await writeLog(Buffer.concat(legacy)))).outcome).toMatchObject({ ok: false, code: 'INVALID_UTF8', line: 201 });
  });

  it('a file whose lines, glued by commas, would parse into as many valid events still fails on its first bad line', async () => {
    // Line 102 is event 102 cut inside its nested `input` (before `,[2,…`), line 103 the rest of it;
    // line 104 holds events 103 and 104. As one array they are exactly events 102–104, in order.
    // (Lines without checksums: with them, each of these lines fails its checksum anyway.)
    const lines = eventLines(200, 1, true);
    const cut = lines[101]!.indexOf(',[2,');
    expect(lines[101]!.includes('"type":"tool/call"') && cut > 0).toBe(true);
    lines.splice(101, 3, lines[101]!.slice(0, cut), lines[101]!.slice(cut + 1), `${lines[102]},${lines[103]}`);
    const glued = JSON.parse(`[${lines.slice(101, 104).join(',')}]`) as unknown[];
    expect(glued.map((e) => LogEventSchema.safeParse(e).success)).toEqual([true, true, true]);

    const { outcome: o } = await bothWays(await writeLog(lines.join('\n') + '\n'));
    expect(o).toMatchObject({ ok: false, code: 'INVALID_JSON', line: 102 });
    expect(o.events).toHaveLength(101);
  });

  it('any mutation of a log gives the same outcome both ways', async () => {
    const text = eventLines(60).join('\n') + '\n';
    const junk = ['\n', ',', '"', '\\', '{', '}', '[', ']', ' ', '\n\n', '},{', '"\n"', 'é'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(text.length), fc.nat(20), fc.constantFrom(...junk)), { minLength: 1, maxLength: 3 }),
        async (edits) => {
          let t = text;
          for (const [pos, cut, insert] of edits) {
            const p = pos % (t.length + 1);
            t = t.slice(0, p) + insert + t.slice(p + (cut % 3 === 0 ? cut : 0));
          }
          await bothWays(await writeLog(t));
        },
      ),
      { numRuns: 40 },
    );
  }, 60_000);

  it('small files stay on this thread; a worker that fails is replaced by this thread, from where it got to', async () => {
    const path = await writeLog(eventLines(300).join('\n') + '\n');
    const stats = { arrayRuns: 0, lineRuns: 0, workerFailed: false };
    await replayJsonlLog(path, () => undefined, { parallelStats: stats }); // below the default threshold
    expect(stats).toEqual({ arrayRuns: 0, lineRuns: 0, workerFailed: false });

    const alone = await outcome(path, { parallelMinBytes: Infinity });
    for (const failAfter of [0, 3]) {
      Object.assign(stats, { arrayRuns: 0, lineRuns: 0, workerFailed: false });
      const failing = await outcome(path, { parallelMinBytes: 0, parallelChunking: { ...SMALL, failAfter }, parallelStats: stats });
      expect(failing).toEqual(alone);
      expect(stats.workerFailed).toBe(true);
      expect(stats.arrayRuns > 0).toBe(failAfter > 0);
    }
  });

  it('an error thrown by onEvent ends the replay and its worker', async () => {
    const path = await writeLog(eventLines(300).join('\n') + '\n');
    let seen = 0;
    const error = await replayJsonlLog(
      path,
      () => {
        if (++seen === 120) throw new Error('consumer failed');
      },
      { parallelMinBytes: 0, parallelChunking: SMALL },
    ).catch((e: unknown) => e);
    expect((error as Error).message).toBe('consumer failed');
    expect(seen).toBe(120);
  });

  it('runs from the TypeScript sources under tsx, and leaves nothing that keeps the process alive', async () => {
    const path = await writeLog(eventLines(300).join('\n') + '\n');
    const module = fileURLToPath(new URL('../../../src/adapters/log/jsonlLog.ts', import.meta.url));
    const script = `
      const { replayJsonlLog } = await import(${JSON.stringify(module)});
      const stats = { arrayRuns: 0, lineRuns: 0, workerFailed: false };
      const ok = await replayJsonlLog(${JSON.stringify(path)}, () => {}, { parallelMinBytes: 0, parallelChunking: { runBytes: 2000, aloneReadBytes: 0 }, parallelStats: stats });
      const failed = await replayJsonlLog(${JSON.stringify(path)}, (e) => { if (e.seq === 200) throw new Error('stop'); }, { parallelMinBytes: 0 }).catch((e) => e.message);
      console.log(JSON.stringify({ events: ok.events, stats, failed }));`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 15_000 });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0); // exited by itself, in time
    expect(JSON.parse(child.stdout)).toMatchObject({ events: 300, stats: { workerFailed: false }, failed: 'stop' });
    expect(JSON.parse(child.stdout).stats.arrayRuns).toBeGreaterThan(10);
  });
});
