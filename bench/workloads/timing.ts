/**
 * W2 parallel efficiency, W3 commit lag under skew, W5 streaming dispatch: real timers, tools that
 * sleep with setTimeout, wall-clock from `startTurn` to `done`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { openJsonlSessionLog } from '../../src/adapters/log/jsonlLog.js';
import { scriptedModel, type ScriptedResponse } from '../../src/adapters/model/scriptedModel.js';
import type { LogEvent } from '../../src/protocol/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { createFloorRuntime } from '../floor.js';
import { allowPolicy } from '../lib/fixtures.js';
import { skeletonParallel } from '../lib/skeleton.js';
import { median, nowMs } from '../lib/stats.js';

/** What the sleeping tool records about one run. */
interface Probe {
  inFlight: number;
  maxInFlight: number;
  startedAt: number[];
  settledAt: number[];
}
const newProbe = (): Probe => ({ inFlight: 0, maxInFlight: 0, startedAt: [], settledAt: [] });
let probe: Probe = newProbe();

const sleepTool = defineTool({
  name: 'sleep',
  description: 'sleeps ms milliseconds',
  input: z.object({ i: z.number(), ms: z.number() }),
  isConcurrencySafe: () => true,
  execute: (a, exec) =>
    new Promise<string>((resolve, reject) => {
      const p = probe;
      p.startedAt[a.i] = nowMs();
      p.inFlight++;
      if (p.inFlight > p.maxInFlight) p.maxInFlight = p.inFlight;
      const signal = exec?.signal;
      const timer = setTimeout(() => {
        p.inFlight--;
        p.settledAt[a.i] = nowMs();
        resolve('slept');
      }, a.ms);
      signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
    }),
});

const usage = { inputTokens: 1, outputTokens: 1 };

function sleeps(ms: readonly number[]): ScriptedResponse[] {
  return [{ toolCalls: ms.map((m, i) => ({ toolName: 'sleep', input: { i, ms: m } })), usage }, { text: 'done', usage }];
}

interface TurnRun {
  wallMs: number;
  maxInFlight: number;
  inOrder: boolean;
  /** performance.now() when each tool/result (by call index) reached the log. */
  resultAt: number[];
  startedAt: number[];
  settledAt: number[];
  /** nowMs() when the turn was started. */
  t0: number;
  /** With a JSONL log: write+fsync groups during the turn. */
  fsyncs?: number;
}

/** A JSONL session log in a fresh directory, for the timing workloads run "with the JSONL log" (W2/W5). */
async function jsonlSession(name: string): Promise<JsonlSession & { remove: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-bench-jsonl-'));
  const session = await openJsonlSessionLog(join(dir, `${name}.jsonl`));
  return { ...session, remove: async () => (await session.sink.close(), rmSync(dir, { recursive: true, force: true })) };
}

type JsonlSession = Awaited<ReturnType<typeof openJsonlSessionLog>>;

async function dshRun(script: ScriptedResponse[], opts: { concurrency?: number; chunkDelayMs?: (part: { type: string }) => number; jsonl?: JsonlSession } = {}): Promise<TurnRun> {
  // With `jsonl`: the session log is a JSONL file (group commit, fsync) that the turn appends to,
  // as a session's next turn does, and every body waits until its tool/call is durable.
  const jsonl = opts.jsonl;
  if (jsonl) await jsonl.sink.flush(); // the previous turn's tail is not this turn's cost
  const commitsBefore = jsonl?.sink.commits ?? 0;
  const rt = createRuntime({ tools: [sleepTool], concurrency: opts.concurrency, log: jsonl?.log });
  rt.hooks.on('tools/pre-execute', 'policy', allowPolicy);
  const resultAt: number[] = [];
  const order: number[] = [];
  const callIndex = new Map<string, number>();
  rt.log.subscribe((e: LogEvent) => {
    if (e.type === 'tool/call') callIndex.set(e.callId, e.index);
    if (e.type === 'tool/result') {
      const i = callIndex.get(e.callId)!;
      resultAt[i] = nowMs();
      order.push(i);
    }
  });
  probe = newProbe();
  const p = probe;
  const model = scriptedModel(script, { chunkDelayMs: opts.chunkDelayMs ? (part) => opts.chunkDelayMs!(part) : 0 });
  const t0 = nowMs();
  const out = await rt.startTurn({ model, input: 'go', maxSteps: 4 }).done;
  const wallMs = nowMs() - t0;
  const fsyncs = jsonl ? jsonl.sink.commits - commitsBefore : undefined;
  if (out.outcome !== 'completed') throw new Error(`turn ended ${out.outcome}: ${out.error}`);
  const n = (script[0]!.toolCalls ?? []).length;
  return { wallMs, maxInFlight: p.maxInFlight, inOrder: order.length === n && order.every((x, i) => x === i), resultAt, startedAt: p.startedAt, settledAt: p.settledAt, t0, fsyncs };
}

async function floorRun(ms: readonly number[], concurrency: number): Promise<{ wallMs: number; inOrder: boolean }> {
  const rt = createFloorRuntime({ tools: [sleepTool], concurrency });
  rt.onPreExecute(allowPolicy);
  probe = newProbe();
  const calls = ms.map((m, i) => ({ callId: `c${i}`, toolName: 'sleep', input: JSON.stringify({ i, ms: m }) }));
  const t0 = nowMs();
  await rt.runTurn((i) => Promise.resolve(i === 0 ? { toolCalls: calls } : { text: 'done' }), 'go', 4);
  const wallMs = nowMs() - t0;
  const results = rt.log.filter((e) => e.type === 'tool/result').map((e) => e.callId);
  return { wallMs, inOrder: results.every((id, i) => id === `c${i}`) };
}

/** The XState actor-per-call skeleton (bench/lib/skeleton.ts) with the same sleeping calls: wall ms. */
async function skeletonRun(n: number, ms: number): Promise<number> {
  const t0 = nowMs();
  await skeletonParallel(n, ms);
  return nowMs() - t0;
}

/**
 * Where one dsh W2 turn's time went (ms, medians over the repetitions): from the turn's start to
 * the first body's start; from the first body's start to the last one's (calls dispatched one by
 * one as the model streams them); the last body's own time beyond its 20 ms (timer lateness, not
 * dsh's); from the last body's end to the turn's end (its result committed, the second step, turn/end).
 */
export interface W2Breakdown {
  toFirstBodyMs: number;
  dispatchSpreadMs: number;
  lastBodyOverMs: number;
  tailMs: number;
}

/**
 * A timing workload run with the session log in a JSONL file (fsync on): `wall` in the unit of
 * the workload's own figure (W2: ÷ 20 ms; W5: ms), the first body's start after the turn's, the
 * write+fsync groups per turn, and whether results were in order (W2: and 16 bodies in flight).
 */
export interface JsonlTiming {
  wall: number;
  toFirstBodyMs: number;
  fsyncsPerTurn: number;
  inOrder: boolean;
}

export interface W2Result {
  wallOverIdeal: number;
  maxInFlight: number;
  inOrder: boolean;
}

/** W2: 16 concurrency-safe tools sleeping 20 ms (concurrency limit 16). */
export async function runW2(opts: { quick: boolean }): Promise<{ result: W2Result; floorWallOverIdeal: number; skeletonWallOverIdeal: number; breakdown: W2Breakdown; reps: number; jsonl: JsonlTiming }> {
  const reps = opts.quick ? 7 : 21;
  const ms = Array.from({ length: 16 }, () => 20);
  const script = sleeps(ms);
  const session = await jsonlSession('w2');
  await dshRun(script, { concurrency: 16 });
  await dshRun(script, { concurrency: 16, jsonl: session });
  await floorRun(ms, 16);
  await skeletonRun(16, 20);
  const walls: number[] = [];
  const floorWalls: number[] = [];
  const skeletonWalls: number[] = [];
  const parts: Record<keyof W2Breakdown, number[]> = { toFirstBodyMs: [], dispatchSpreadMs: [], lastBodyOverMs: [], tailMs: [] };
  const jsonlWalls: number[] = [];
  const jsonlFirstBody: number[] = [];
  const jsonlFsyncs: number[] = [];
  let jsonlInOrder = true;
  let maxInFlight = 0;
  let inOrder = true;
  for (let r = 0; r < reps; r++) {
    const withLog = await dshRun(script, { concurrency: 16, jsonl: session });
    jsonlWalls.push(withLog.wallMs);
    jsonlFirstBody.push(withLog.startedAt[0]! - withLog.t0);
    jsonlFsyncs.push(withLog.fsyncs!);
    jsonlInOrder &&= withLog.inOrder && withLog.maxInFlight === 16;
    const run = await dshRun(script, { concurrency: 16 });
    walls.push(run.wallMs);
    const last = run.startedAt.length - 1;
    parts.toFirstBodyMs.push(run.startedAt[0]! - run.t0);
    parts.dispatchSpreadMs.push(run.startedAt[last]! - run.startedAt[0]!);
    parts.lastBodyOverMs.push(run.settledAt[last]! - run.startedAt[last]! - 20);
    parts.tailMs.push(run.t0 + run.wallMs - Math.max(...run.settledAt));
    maxInFlight = Math.max(maxInFlight, run.maxInFlight);
    inOrder &&= run.inOrder;
    const f = await floorRun(ms, 16);
    floorWalls.push(f.wallMs);
    inOrder &&= f.inOrder;
    skeletonWalls.push(await skeletonRun(16, 20));
  }
  await session.remove();
  return {
    jsonl: { wall: median(jsonlWalls) / 20, toFirstBodyMs: median(jsonlFirstBody), fsyncsPerTurn: median(jsonlFsyncs), inOrder: jsonlInOrder },
    result: { wallOverIdeal: median(walls) / 20, maxInFlight, inOrder },
    floorWallOverIdeal: median(floorWalls) / 20,
    skeletonWallOverIdeal: median(skeletonWalls) / 20,
    breakdown: {
      toFirstBodyMs: median(parts.toFirstBodyMs),
      dispatchSpreadMs: median(parts.dispatchSpreadMs),
      lastBodyOverMs: median(parts.lastBodyOverMs),
      tailMs: median(parts.tailMs),
    },
    reps,
  };
}

export interface W3Result {
  commitLagMs: number;
  inOrder: boolean;
}

/** W3: 8 tools, tool i sleeps (8−i)·5 ms; lag between "0..i settled" and "result i in the log". */
export async function runW3(opts: { quick: boolean }): Promise<{ result: W3Result; reps: number; worstMs: number }> {
  const reps = opts.quick ? 7 : 21;
  const ms = Array.from({ length: 8 }, (_, i) => (8 - i) * 5);
  const script = sleeps(ms);
  await dshRun(script);
  const lags: number[] = [];
  let inOrder = true;
  for (let r = 0; r < reps; r++) {
    const run = await dshRun(script);
    inOrder &&= run.inOrder;
    let ready = 0;
    let worst = 0;
    for (let i = 0; i < 8; i++) {
      ready = Math.max(ready, run.settledAt[i]!);
      worst = Math.max(worst, run.resultAt[i]! - ready);
    }
    lags.push(worst);
  }
  return { result: { commitLagMs: median(lags), inOrder }, reps, worstMs: Math.max(...lags) };
}

export interface W5Result {
  wallMs: number;
  idealMs: number;
  noOverlapMs: number;
}

/** W5: 8 calls streamed 50 ms apart; call 0 takes 300 ms, the rest 10 ms. */
export async function runW5(opts: { quick: boolean }): Promise<{ result: W5Result; reps: number; jsonl: JsonlTiming }> {
  const reps = opts.quick ? 3 : 7;
  const gap = 50;
  const ms = [300, 10, 10, 10, 10, 10, 10, 10];
  const script = sleeps(ms);
  const chunkDelayMs = (part: { type: string }) => (part.type === 'tool-call' ? gap : 0);
  // Call k arrives at gap·(k+1). Overlapping: done when the last body ends. No overlap: the whole
  // stream first, then the calls (in parallel, so the longest one).
  const idealMs = Math.max(...ms.map((m, k) => gap * (k + 1) + m));
  const noOverlapMs = gap * ms.length + Math.max(...ms);
  const walls: number[] = [];
  const session = await jsonlSession('w5');
  const jsonl: TurnRun[] = [];
  for (let r = 0; r < reps; r++) {
    walls.push((await dshRun(script, { chunkDelayMs })).wallMs);
    jsonl.push(await dshRun(script, { chunkDelayMs, jsonl: session }));
  }
  await session.remove();
  return {
    result: { wallMs: median(walls), idealMs, noOverlapMs },
    reps,
    jsonl: {
      wall: median(jsonl.map((t) => t.wallMs)),
      toFirstBodyMs: median(jsonl.map((t) => t.startedAt[0]! - t.t0)),
      fsyncsPerTurn: median(jsonl.map((t) => t.fsyncs!)),
      inOrder: jsonl.every((t) => t.inOrder),
    },
  };
}
