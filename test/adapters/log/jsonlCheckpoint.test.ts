/**
 * Issue 16.1: checkpoints of a JSONL session log. A `session/checkpoint` line is written every so
 * many events; a resumed session starts from the last one (reading only the lines after it) and
 * sees exactly what a full replay sees: the same prompt, the same open work, the same turn count,
 * the same remembered approvals, and closing its open work appends the same events. A checkpoint
 * that does not check out (damaged, or a state this code does not write) is not used: the whole
 * file is replayed, and a damaged line is reported as replay always reported it.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findLastCheckpoint, JsonlLogError, openJsonlSessionLog, readJsonlLog } from '../../../src/adapters/log/jsonlLog.js';
import { checksumHex, crc32cOfUtf8 } from '../../../src/adapters/log/crc32c.js';
import type { LogEvent } from '../../../src/protocol/index.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import type { SessionLog } from '../../../src/runtime/log/sessionLog.js';
import { closeOpenWork } from '../../../src/runtime/openWork.js';
import { appendStep, ok } from '../../model/fixtures.js';
import { tempDir } from '../workspaceFixture.js';

const EVERY = 20;

/** `turns` finished turns (a call each, results long enough to stub), one compaction, one allowed-always, then a turn left open mid-step. */
async function writeSession(log: SessionLog, turns: number) {
  for (let t = 1; t <= turns; t++) {
    const turnId = `turn-${t}`;
    log.append({ type: 'turn/start', turnId, input: `question ${t}` });
    const [resultSeq] = appendStep(log, turnId, 0, {
      text: ['Reading.'],
      calls: [{ callId: `c${t}`, toolName: 'read', input: `{"path":"f${t}.txt"}`, result: ok(`c${t}`, 'read', `contents of file ${t} `.repeat(8)) }],
    });
    if (t === 3) log.append({ type: 'context/compacted', turnId, strategy: 'test', stubbedSeqs: [resultSeq!], beforeChars: 0, afterChars: 0 });
    appendStep(log, turnId, 1, { text: [`Answer ${t}.`] });
    log.append({ type: 'turn/end', turnId, outcome: 'completed', steps: 2 });
    await Promise.resolve(); // a session's turns are apart in time: a checkpoint due is written here
  }
  const turnId = `turn-${turns + 1}`;
  log.append({ type: 'turn/start', turnId, input: 'the last question' });
  log.append({ type: 'step/start', turnId, stepIndex: 0 });
  const call = log.append({ type: 'tool/call', turnId, stepIndex: 0, callId: 'open', toolName: 'bash', input: '{"command":"ls"}', index: 0, executionMode: 'exclusive' });
  log.append({ type: 'tool/approval-request', turnId, stepIndex: 0, callId: 'open', toolName: 'bash' });
  log.append({ type: 'tool/approval-answer', turnId, stepIndex: 0, callId: 'open', answer: 'allowed-always' });
  return call.seq;
}

/** Everything a resumed session is made of, as plain data (times left out of the closing events). */
function summary(log: SessionLog) {
  const index = log.index;
  return {
    lastSeq: log.lastSeq,
    turnCount: index.turnCount,
    prompt: index.prompt.render({ system: 'sys' }),
    openWork: index.openWork(),
    approvals: index.rememberedCalls(),
  };
}

const withoutTime = (events: readonly LogEvent[]) => events.map(({ time: _, ...e }) => e);

async function session(turns: number) {
  const path = join(await tempDir('dsh-checkpoint-'), 'session.jsonl');
  const { log, sink } = await openJsonlSessionLog(path, { clock: new ManualClock(1_000), checkpointEvery: EVERY, fsync: false });
  await writeSession(log, turns);
  await Promise.resolve(); // the checkpoint due after the last append
  await sink.close();
  return path;
}

describe('JSONL log checkpoints (issue 16.1)', () => {
  it('are written every so many events (once the file has grown by the size of the last one), and the file still replays whole', async () => {
    const path = await session(40);
    const { events } = await readJsonlLog(path);
    const checkpoints = events.filter((e) => e.type === 'session/checkpoint');
    expect(checkpoints.length).toBeGreaterThanOrEqual(2);
    const bytesOf = (e: LogEvent) => JSON.stringify(e).length;
    for (let i = 1; i < checkpoints.length; i++) {
      const between = events.filter((e) => e.seq > checkpoints[i - 1]!.seq && e.seq < checkpoints[i]!.seq);
      expect(between.length).toBeGreaterThanOrEqual(EVERY);
      // Checkpoints never make up much more than half the file.
      expect(between.reduce((n, e) => n + bytesOf(e) + 10, 0)).toBeGreaterThanOrEqual(bytesOf(checkpoints[i - 1]!));
    }
    // Each records the state of the events before it.
    for (const c of checkpoints) expect((c.state as { seq: number }).seq).toBe(c.seq - 1);
    const found = await findLastCheckpoint(path);
    expect(found?.event.seq).toBe(checkpoints.at(-1)!.seq);
  });

  it('resuming from the last checkpoint gives what a full replay gives, and closes the same open work', async () => {
    const path = await session(12);
    const full = await openJsonlSessionLog(path, { clock: new ManualClock(5_000), fromCheckpoint: false, checkpointEvery: 0, fsync: false, lease: false });
    const fromCheckpoint = await openJsonlSessionLog(path, { clock: new ManualClock(5_000), checkpointEvery: 0, fsync: false });
    try {
      expect(full.resumedFrom).toBeUndefined();
      expect(fromCheckpoint.resumedFrom).toBeGreaterThan(0);
      // It holds only the events after its checkpoint.
      expect(fromCheckpoint.log.firstSeq).toBe(fromCheckpoint.resumedFrom! + 1);
      expect(fromCheckpoint.log.events()).toEqual(full.log.events().filter((e) => e.seq > fromCheckpoint.resumedFrom!));
      expect(summary(fromCheckpoint.log)).toEqual(summary(full.log));
      expect(summary(full.log).openWork.calls.map((c) => c.callId)).toEqual(['open']);
      expect(summary(full.log).approvals.map((c) => c.type)).toEqual(['tool/call']); // one call answered allowed-always

      const why = 'the session stopped before this finished (closed on resume)';
      const before = full.log.lastSeq;
      expect(closeOpenWork(fromCheckpoint.log, why)).toEqual(closeOpenWork(full.log, why));
      expect(withoutTime(fromCheckpoint.log.events({ from: before + 1 }))).toEqual(withoutTime(full.log.events({ from: before + 1 })));
      expect(summary(fromCheckpoint.log)).toEqual(summary(full.log));
    } finally {
      await full.sink.close();
      await fromCheckpoint.sink.close();
    }
  });

  it('reads only what follows the checkpoint: a damaged line before it goes unread, while a full replay reports it', async () => {
    const path = await session(12);
    const text = await readFile(path, 'latin1');
    const lines = text.split('\n');
    // Line 2 is `step/start` of turn 1, long before the last checkpoint: one character changed.
    lines[1] = lines[1]!.replace('"stepIndex":0', '"stepIndex":1');
    await writeFile(path, lines.join('\n'), 'latin1');
    await expect(readJsonlLog(path)).rejects.toMatchObject({ code: 'CHECKSUM_MISMATCH', line: 2 });
    const resumed = await openJsonlSessionLog(path, { checkpointEvery: 0, fsync: false });
    expect(resumed.resumedFrom).toBeGreaterThan(2);
    await resumed.sink.close();
  });

  it('a damaged checkpoint is not used: the whole file is replayed, and reports the line as before', async () => {
    const path = await session(12);
    const found = (await findLastCheckpoint(path))!;
    const bytes = await readFile(path);
    bytes[found.start + 40]! ^= 0x02; // a bit inside the checkpoint's JSON
    await writeFile(path, bytes);
    expect(await findLastCheckpoint(path)).toBeUndefined();
    const error = await openJsonlSessionLog(path, { checkpointEvery: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JsonlLogError);
    expect(error).toMatchObject({ code: 'CHECKSUM_MISMATCH', line: found.event.seq });
  });

  it.each([
    ['claims to cover one event fewer', (state: Record<string, unknown>) => ({ ...state, seq: (state.seq as number) - 1 })],
    [
      'a result of the wrong shape in its prompt',
      (state: Record<string, unknown>) => {
        const copy = structuredClone(state) as { prompt: { turns: Array<{ steps: Array<{ results: Array<[number, Record<string, unknown>]> }> }> } };
        copy.prompt.turns[0]!.steps[0]!.results[0]![1].chars = 'many';
        return copy;
      },
    ],
    ['an open call that is not a tool/call', (state: Record<string, unknown>) => ({ ...state, calls: [{ type: 'tool/call' }] })],
  ])('a checkpoint whose state does not check out (right checksum: %s) is not used: the full replay gives the same session', async (_, forge) => {
    const path = await session(12);
    const reference = await openJsonlSessionLog(path, { fromCheckpoint: false, checkpointEvery: 0, fsync: false });
    await reference.sink.close();
    const found = (await findLastCheckpoint(path))!;
    const bytes = await readFile(path);
    // Another writer's idea of the state, checksum recomputed.
    const forged = JSON.stringify({ ...found.event, state: forge(found.event.state) });
    const line = Buffer.from(`${checksumHex(crc32cOfUtf8(forged))} ${forged}\n`, 'utf8');
    await writeFile(path, Buffer.concat([bytes.subarray(0, found.start), line, bytes.subarray(found.end)]));
    const opened = await openJsonlSessionLog(path, { checkpointEvery: 0, fsync: false });
    await opened.sink.close();
    expect(opened.resumedFrom).toBeUndefined();
    expect(summary(opened.log)).toEqual(summary(reference.log));
  });

  it('a torn last line after the checkpoint is cut off and reported, and the session resumes from the checkpoint', async () => {
    const path = await session(12);
    const size = (await readFile(path)).length;
    await writeFile(path, Buffer.concat([await readFile(path), Buffer.from('0123abcd {"type":"warn')]));
    const opened = await openJsonlSessionLog(path, { checkpointEvery: 0, fsync: false });
    await opened.sink.close();
    expect(opened.resumedFrom).toBeGreaterThan(0);
    expect(opened.torn).toMatchObject({ offset: size, repaired: true });
    expect((await readFile(path)).length).toBe(size);
  });

  it('a session resumed from a checkpoint goes on appending with the next seq, and checkpoints again', async () => {
    const path = await session(12);
    const first = await openJsonlSessionLog(path, { checkpointEvery: EVERY, fsync: false });
    const lastSeq = first.log.lastSeq;
    closeOpenWork(first.log, 'closed on resume');
    await writeSession(first.log, 6);
    await Promise.resolve();
    await first.sink.close();
    const { events } = await readJsonlLog(path);
    expect(events.at(-1)!.seq).toBe(events.length);
    expect(events.filter((e) => e.type === 'session/checkpoint' && e.seq > lastSeq).length).toBeGreaterThan(0);
    const again = await openJsonlSessionLog(path, { checkpointEvery: 0, fsync: false });
    const full = await openJsonlSessionLog(path, { fromCheckpoint: false, checkpointEvery: 0, fsync: false, lease: false });
    await again.sink.close();
    await full.sink.close();
    expect(again.resumedFrom).toBeGreaterThan(lastSeq);
    expect(summary(again.log)).toEqual(summary(full.log));
  });
});
