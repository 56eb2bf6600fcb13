/**
 * A session log opened from its last `session/checkpoint` holds only the events after it
 * (`log.firstSeq`). What reads the session's history must still see the whole session: a turn
 * suspended before the checkpoint is still pending (not closed INTERRUPTED, resumed the same way),
 * and turns folded after a checkpoint resume are digested as a full replay digests them. Each
 * case: the same file opened from its checkpoint and replayed in full must behave alike.
 */
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openJsonlSessionLog, readJsonlLog } from '../../../src/adapters/log/jsonlLog.js';
import { scriptedModel } from '../../../src/adapters/model/index.js';
import { LogEventSchema, type LogEvent, type NewLogEvent } from '../../../src/protocol/index.js';
import { ManualClock } from '../../../src/runtime/clock.js';
import { compactAndMeasure, defaultCompactor } from '../../../src/runtime/context/compaction.js';
import { foldOnOverflow } from '../../../src/runtime/context/fitContext.js';
import { readFoldedTurnsOf } from '../../../src/runtime/context/foldTurns.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import { createMemoryLog, type SessionLog } from '../../../src/runtime/log/sessionLog.js';
import { closeOpenWork } from '../../../src/runtime/openWork.js';
import { suspendingApproval, type ApprovalService } from '../../../src/runtime/pipeline/approvalService.js';
import { appendStep, failed, ok } from '../../model/fixtures.js';
import { ErrorCode } from '../../../src/protocol/index.js';
import { tempDir } from '../../adapters/workspaceFixture.js';

function tools(ran: string[]) {
  return [
    defineTool({ name: 'read', input: z.object({ path: z.string() }), isConcurrencySafe: () => true, execute: async (a) => (ran.push(`read ${a.path}`), `contents of ${a.path}`) }),
    defineTool({ name: 'run', input: z.object({ cmd: z.string() }), execute: async (a) => (ran.push(`run ${a.cmd}`), `ran ${a.cmd}`) }),
  ];
}

function runtimeOn(log: SessionLog, ran: string[], approval: ApprovalService) {
  const rt = createRuntime({ log, tools: tools(ran), approval, clock: new ManualClock(5_000) });
  rt.hooks.on('tools/pre-execute', 'ask', (call, next) => (call.toolName === 'run' ? { kind: 'ask', reason: 'may I run?' } : next()));
  return rt;
}

const allowOnce: ApprovalService = { request: async () => 'allowed-once' };
const withoutTime = (events: readonly LogEvent[]) => events.map(({ time: _, ...e }) => e);

/**
 * Writes `events` to a JSONL file whose last line is a checkpoint (written after exactly that many
 * events), and returns it with a copy: one to open from the checkpoint, one to replay in full.
 */
async function fileEndingOnCheckpoint(events: readonly LogEvent[]) {
  const dir = await tempDir('dsh-checkpoint-views-');
  const path = join(dir, 'session.jsonl');
  const { log, sink } = await openJsonlSessionLog(path, { clock: new ManualClock(1_000), checkpointEvery: events.length, fsync: false });
  for (const { seq: _s, time: _t, ...e } of events) log.append(e as NewLogEvent);
  await Promise.resolve(); // the checkpoint due after the last append
  await sink.close();
  const written = (await readJsonlLog(path)).events;
  expect(written).toHaveLength(events.length + 1);
  expect(written.at(-1)!.type).toBe('session/checkpoint');
  const copy = join(dir, 'replayed.jsonl');
  await copyFile(path, copy);
  const fromCheckpoint = await openJsonlSessionLog(path, { fsync: false, clock: new ManualClock(9_000) });
  const replayed = await openJsonlSessionLog(copy, { fsync: false, fromCheckpoint: false, clock: new ManualClock(9_000) });
  expect(fromCheckpoint.resumedFrom).toBe(events.length + 1);
  expect(fromCheckpoint.log.events()).toEqual([]);
  expect(replayed.resumedFrom).toBeUndefined();
  return { fromCheckpoint, replayed, checkpointSeq: events.length + 1, path };
}

describe('views of a session resumed from a checkpoint', () => {
  it('a turn suspended before the checkpoint (nothing after it) is still pending, left open by closeOpenWork, and resumes as in a full replay', async () => {
    const ran: string[] = [];
    const memory = createMemoryLog({ clock: new ManualClock(1_000) });
    const first = await runtimeOn(memory, ran, suspendingApproval).startTurn({
      model: scriptedModel([{ toolCalls: [{ toolName: 'read', input: { path: 'a' }, toolCallId: 'c0' }, { toolName: 'run', input: { cmd: 'make' }, toolCallId: 'c1' }] }]),
      input: 'build it',
    }).done;
    expect(first.outcome).toBe('suspended');
    const { fromCheckpoint, replayed, checkpointSeq, path } = await fileEndingOnCheckpoint(memory.events());

    const outcomes = [];
    for (const opened of [replayed, fromCheckpoint]) {
      const { log, sink } = opened;
      // What `dsh resume` does first: the suspended turn is waiting work, not open work.
      expect(closeOpenWork(log, 'the session stopped')).toEqual({ calls: 0, steps: 0, turns: 0 });
      const rtRan: string[] = [];
      const rt = runtimeOn(log, rtRan, allowOnce);
      expect(rt.pendingSuspension()).toMatchObject({ turnId: 'turn-1', stepIndex: 0, approvals: [{ callId: 'c1', toolName: 'run', reason: 'may I run?' }] });
      const model = scriptedModel([{ text: 'made' }]);
      const done = await rt.resumeTurn({ model }).done;
      expect(done).toMatchObject({ turnId: 'turn-1', outcome: 'completed', text: 'made' });
      expect(rtRan).toEqual(['run make']);
      expect(model.calls).toHaveLength(1);
      expect(rt.pendingSuspension()).toBeUndefined();
      await sink.close();
      outcomes.push(withoutTime(log.events({ from: checkpointSeq + 1 })));
    }
    // The same events after the checkpoint, whichever way the session was opened.
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[0]!.map((e) => e.type)).not.toContain('turn/start');
    // The suspended step is not started again; the turn goes on with its next step.
    expect(outcomes[0]!.filter((e) => e.type === 'step/start').map((e) => e.type === 'step/start' && e.stepIndex)).toEqual([1]);
    const whole = (await readJsonlLog(path)).events;
    whole.forEach((e, i) => {
      expect(e.seq).toBe(i + 1);
      LogEventSchema.parse(e);
    });
  });

  it('turns folded after a checkpoint resume are digested as a full replay digests them; older results are stubbed alike', async () => {
    const memory = createMemoryLog({ clock: new ManualClock(1_000) });
    for (let t = 1; t <= 4; t++) {
      const turnId = `turn-${t}`;
      memory.append({ type: 'turn/start', turnId, input: `question ${t}` });
      appendStep(memory, turnId, 0, {
        text: ['Reading.'],
        calls: [
          { callId: `c${t}`, toolName: 'read', input: `{"path":"f${t}.txt"}`, result: ok(`c${t}`, 'read', `contents of file ${t} `.repeat(200)) },
          { callId: `g${t}`, toolName: 'grep', input: `{"pattern":"x"}`, result: failed(`g${t}`, 'grep', ErrorCode.TOOL_FAILED, 'no match') },
        ],
      });
      appendStep(memory, turnId, 1, { text: [`Answer ${t}: `, `all about file ${t}.`] });
      memory.append({ type: 'turn/end', turnId, outcome: t === 2 ? 'failed' : 'completed', steps: 2 });
    }
    const { fromCheckpoint, replayed, checkpointSeq } = await fileEndingOnCheckpoint(memory.events());

    const stubbed = [];
    const folds = [];
    const digests = [];
    for (const { log, sink } of [replayed, fromCheckpoint]) {
      digests.push(readFoldedTurnsOf(log, ['turn-1', 'turn-2', 'turn-3', 'turn-4']));
      log.append({ type: 'turn/start', turnId: 'turn-5', input: 'and now?' });
      const measured = compactAndMeasure(log, defaultCompactor, { turnId: 'turn-5' });
      stubbed.push(measured.event?.stubbedSeqs);
      expect(foldOnOverflow(log, { turnId: 'turn-5' })).toBe(true);
      const fold = log.events().findLast((e) => e.type === 'context/compacted' && e.foldedTurnIds !== undefined);
      folds.push(fold && fold.type === 'context/compacted' ? { turns: fold.foldedTurnIds, summary: fold.summary } : undefined);
      await sink.close();
    }
    expect(digests[0]![1]).toEqual({ turnId: 'turn-2', input: 'question 2', tools: [{ name: 'read', calls: 1, errors: 0 }, { name: 'grep', calls: 1, errors: 1 }], answer: 'Answer 2: all about file 2.', outcome: 'failed' });
    expect(digests[1]).toEqual(digests[0]);
    expect(stubbed[0]).toBeDefined();
    expect(stubbed[1]).toEqual(stubbed[0]);
    expect(folds[0]?.summary).toMatch(/turn-3: asked "question 3"\. Tools: read×1, grep×1 \(1 failed\)\. Answered: "Answer 3: all about file 3\."/);
    expect(folds[0]?.summary).toMatch(/turn-2: asked "question 2"\..* Answered \(failed\): "Answer 2/);
    expect(folds[1]).toEqual(folds[0]);
    expect(checkpointSeq).toBeGreaterThan(0);
  });
});
