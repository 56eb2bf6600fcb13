/**
 * W8 (issue 16.1): flat per-step cost. CPU per step of a session whose log already holds 1k, 10k
 * and 100k events, and the resume time of a 1M-event JSONL session.
 *
 * Per step: a runtime over an in-memory log prefilled with the history (turns of W6's shape: a
 * step of 8 read calls with results, an answer step), one untimed turn (the first request renders
 * the history once), then turns of the W1 shape (8 no-op calls, then an answer: 2 steps each)
 * timed by process CPU time (user + system) ÷ steps. Lengths are interleaved in each repetition;
 * the median over repetitions is kept. Ratio = µs at 100k ÷ µs at 1k.
 *
 * Resume: a JSONL file of 1M events (10k quick) written as the sink writes lines, with checkpoints
 * where the session log writes them (every 5,000 events, once the file has grown by the last
 * checkpoint's size), and a compaction every 100 turns stubbing the results of older turns, as a
 * long session does. Timed: `openJsonlSessionLog` of it (from its last checkpoint) to a log ready to
 * append; reference: `replayJsonlLog` of the whole file (events not kept).
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptedModel } from '../../src/adapters/model/scriptedModel.js';
import { checksumHex, crc32cOfUtf8 } from '../../src/adapters/log/crc32c.js';
import { DEFAULT_CHECKPOINT_EVERY, findLastCheckpoint, openJsonlSessionLog, replayJsonlLog } from '../../src/adapters/log/jsonlLog.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { SessionIndex } from '../../src/runtime/log/sessionIndex.js';
import { createMemoryLog } from '../../src/runtime/log/sessionLog.js';
import { allowPolicy, dshScript, noopTool } from '../lib/fixtures.js';
import { median, nowMs } from '../lib/stats.js';

export interface W8Result {
  us1k: number;
  us10k: number;
  us100k: number;
  /** us100k ÷ us1k (target ≤ 1.2). */
  ratio: number;
  /** ms to resume a 1M-event JSONL session from its last checkpoint (null: not measured). */
  resumeMs1M: number | null;
}
export interface W8Detail {
  reps: number;
  turnsPerSample: number;
  /** The whole file replayed instead (ms; events not kept), the reference. */
  fullReplayMs: number | null;
  resumeEvents: number;
  fileMiB: number;
  /** Size of the last checkpoint line (MiB), and events replayed after it. */
  checkpointMiB: number;
  eventsAfterCheckpoint: number;
}

/** One history turn (24 events, W6's shape), stamped from `seq`. */
function historyTurn(t: number, seq: number): LogEvent[] {
  const turnId = `turn-${t}`;
  const out: Array<Record<string, unknown>> = [
    { type: 'turn/start', turnId, input: 'read the eight files and summarise them' },
    { type: 'step/start', turnId, stepIndex: 0 },
    { type: 'llm/stream', turnId, stepIndex: 0, kind: 'text', text: 'I will read the files first.' },
  ];
  for (let i = 0; i < 8; i++) {
    out.push({ type: 'tool/call', turnId, stepIndex: 0, callId: `h-${t}-${i}`, toolName: 'read', input: `{"path":"src/file-${i}.ts"}`, index: i, executionMode: 'parallel' });
  }
  for (let i = 0; i < 8; i++) {
    const content = `export const value${i} = ${i};\n// file ${i} of turn ${t}: a short tool output of about a hundred characters\n`;
    out.push({
      type: 'tool/result',
      turnId,
      stepIndex: 0,
      callId: `h-${t}-${i}`,
      toolName: 'read',
      sourceEventSeqs: [seq + 3 + i],
      result: { callId: `h-${t}-${i}`, toolName: 'read', isError: false, content, value: content, metadata: {} },
    });
  }
  out.push(
    { type: 'step/end', turnId, stepIndex: 0, finishReason: 'tool-calls', toolCalls: 8 },
    { type: 'step/start', turnId, stepIndex: 1 },
    { type: 'llm/stream', turnId, stepIndex: 1, kind: 'text', text: 'All eight files export one constant each.' },
    { type: 'step/end', turnId, stepIndex: 1, finishReason: 'stop', toolCalls: 0 },
    { type: 'turn/end', turnId, outcome: 'completed', steps: 2 },
  );
  return out.map((e, i) => Object.freeze({ ...e, seq: seq + i, time: 1_764_000_000_000 + seq + i }) as unknown as LogEvent);
}
const PER_TURN = 24;

function history(events: number): LogEvent[] {
  const out: LogEvent[] = [];
  for (let t = 1, seq = 1; out.length < events; t++, seq += PER_TURN) out.push(...historyTurn(t, seq));
  return out;
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** µs of CPU per step over `turns` turns of a runtime whose log starts with `prefill`. */
async function sample(prefill: readonly LogEvent[], turns: number): Promise<number> {
  const log = createMemoryLog({ initial: prefill });
  const rt = createRuntime({ tools: [noopTool], log });
  rt.hooks.on('tools/pre-execute', 'policy', allowPolicy);
  const script = dshScript(8);
  const run = async () => {
    const out = await rt.startTurn({ model: scriptedModel(script), input: 'go', maxSteps: 4 }).done;
    if (out.outcome !== 'completed') throw new Error(`W8 turn ended ${out.outcome}: ${out.error}`);
  };
  await run(); // untimed: the first request renders the history once
  const c0 = cpuMs();
  for (let i = 0; i < turns; i++) await run();
  return ((cpuMs() - c0) * 1000) / (turns * 2);
}

/** Writes a JSONL session of `events` events with checkpoints and compactions, as described above. */
export async function writeLongSession(path: string, events: number): Promise<void> {
  const out = createWriteStream(path);
  const index = new SessionIndex();
  let chunk: string[] = [];
  let bytes = 0;
  let sinceCheckpoint = 0;
  let bytesAtCheckpoint = 0;
  let checkpointBytes = 0;
  let seq = 1;
  const flush = async () => {
    if (!chunk.length) return;
    if (!out.write(chunk.join(''))) await new Promise<void>((r) => out.once('drain', () => r()));
    chunk = [];
  };
  const put = (e: LogEvent) => {
    index.apply(e);
    const json = JSON.stringify(e);
    const line = `${checksumHex(crc32cOfUtf8(json))} ${json}\n`;
    chunk.push(line);
    bytes += line.length;
    seq = e.seq + 1;
    return line.length;
  };
  for (let t = 1; seq <= events; t++) {
    for (const e of historyTurn(t, seq)) put(e);
    sinceCheckpoint += PER_TURN;
    if (t % 100 === 0) {
      // Stub the results of every turn but the last one, as compaction would on overflow.
      const stubbedSeqs: number[] = [];
      for (let s = Math.max(1, seq - 100 * PER_TURN - 20); s < seq - PER_TURN; s++) if (index.prompt.hasResult(s) && !index.prompt.isStubbed(s)) stubbedSeqs.push(s);
      put({ type: 'context/compacted', turnId: `turn-${t}`, strategy: 'stub-older-tool-results', stubbedSeqs, beforeChars: 0, afterChars: 0, seq, time: 1_764_000_000_000 + seq } as LogEvent);
      sinceCheckpoint++;
    }
    if (sinceCheckpoint >= DEFAULT_CHECKPOINT_EVERY && bytes - bytesAtCheckpoint >= checkpointBytes) {
      checkpointBytes = put({ ...index.toCheckpoint(), seq, time: 1_764_000_000_000 + seq } as LogEvent);
      bytesAtCheckpoint = bytes;
      sinceCheckpoint = 0;
    }
    if (chunk.length > 20_000) await flush();
  }
  await flush();
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
}

export async function runW8(opts: { quick: boolean; log: (s: string) => void }): Promise<{ result: W8Result; detail: W8Detail }> {
  const lengths = [1_000, 10_000, 100_000] as const;
  const prefills = lengths.map((n) => history(n));
  const reps = opts.quick ? 3 : 9;
  const turns = opts.quick ? 5 : 10;
  const samples: number[][] = lengths.map(() => []);
  await sample(prefills[0]!, turns); // warm-up (JIT)
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < lengths.length; i++) samples[i]!.push(await sample(prefills[i]!, turns));
    opts.log(`  w8 repetition ${r + 1}/${reps}: ${samples.map((s) => s.at(-1)!.toFixed(0)).join(' / ')} µs per step`);
  }
  const [us1k, us10k, us100k] = samples.map((s) => median(s)) as [number, number, number];

  const dir = await mkdtemp(join(tmpdir(), 'dsh-bench-w8-'));
  let resumeMs: number | null = null;
  let fullReplayMs: number | null = null;
  const resumeEvents = opts.quick ? 100_000 : 1_000_000;
  let fileMiB = 0;
  let checkpointMiB = 0;
  let eventsAfterCheckpoint = 0;
  try {
    const path = join(dir, 'long.jsonl');
    opts.log(`  w8 writing a ${resumeEvents.toLocaleString('en')}-event session`);
    await writeLongSession(path, resumeEvents);
    fileMiB = (await stat(path)).size / 2 ** 20;
    for (let rep = 0; rep < 2; rep++) {
      const r0 = nowMs();
      const resumed = await openJsonlSessionLog(path, { fsync: false, checkpointEvery: 0 });
      const ms = nowMs() - r0;
      resumeMs = Math.min(resumeMs ?? Infinity, ms);
      await resumed.sink.close();
      if (resumed.resumedFrom === undefined) throw new Error('W8: the session was not resumed from a checkpoint');
      eventsAfterCheckpoint = resumed.log.lastSeq - resumed.resumedFrom;
      const found = await findLastCheckpoint(path);
      checkpointMiB = found ? (found.end - found.start) / 2 ** 20 : 0;
    }
    opts.log(`  w8 resume ${resumeMs!.toFixed(0)} ms; replaying the whole file for reference`);
    // The events are not kept (a 1M-event log in memory would need a GB of heap): the replay alone.
    const f0 = nowMs();
    await replayJsonlLog(path, () => {});
    fullReplayMs = nowMs() - f0;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return {
    result: { us1k, us10k, us100k, ratio: us100k / us1k, resumeMs1M: opts.quick ? null : resumeMs },
    detail: { reps, turnsPerSample: turns, fullReplayMs, resumeEvents, fileMiB, checkpointMiB, eventsAfterCheckpoint },
  };
}
