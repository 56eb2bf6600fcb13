/**
 * W1 overhead: a 2-step turn in which the scripted model asks for N no-op calls, then answers, run
 * by dsh (runtime, machines, one pre-execute listener, in-memory log) and by the hand-written
 * floor, interleaved in one process. µs per call = (turn(N) − turn(0)) / N from medians.
 */
import { scriptedModel } from '../../src/adapters/model/scriptedModel.js';
import { dshScript, dshTurn, floorScript, floorTurn } from '../lib/fixtures.js';
import { collect, median, nowMs } from '../lib/stats.js';

export const W1_NS = [1, 8, 64, 256] as const;

export interface W1Point {
  dshUs: number;
  floorUs: number;
  ratio: number;
}
export type W1Result = Record<'n1' | 'n8' | 'n64' | 'n256', W1Point>;

export interface W1Detail {
  reps: number;
  /** Median ms per whole turn, by N, for each side. */
  turnMs: { dsh: Record<number, number>; floor: Record<number, number> };
  /** Per call cost of the scripted model's stream alone (part of dsh's number, not the floor's). */
  modelStreamUs: Record<number, number>;
}

/** Runs `turn` repeatedly for at least `ms` (and at least `min` times); returns ms per turn. */
async function sample(turn: () => Promise<void>, k: number): Promise<number> {
  const t0 = nowMs();
  for (let i = 0; i < k; i++) await turn();
  return (nowMs() - t0) / k;
}

async function calibrate(turn: () => Promise<void>, targetMs: number): Promise<number> {
  // Warm up (JIT, caches), then size a sample to take about targetMs.
  let k = 1;
  let per = 0;
  for (let spent = 0; spent < targetMs * 3; ) {
    const t0 = nowMs();
    per = await sample(turn, k);
    spent += nowMs() - t0;
    k = Math.min(k * 2, 4096);
  }
  return Math.max(2, Math.ceil(targetMs / Math.max(per, 1e-3)));
}

async function modelStreamMs(n: number, k: number): Promise<number> {
  const script = dshScript(n);
  const read = async () => {
    const { stream } = await scriptedModel(script).doStream({ prompt: [] });
    const reader = stream.getReader();
    while (!(await reader.read()).done);
  };
  for (let i = 0; i < 20; i++) await read();
  return sample(read, k);
}

export async function runW1(opts: { quick: boolean; log: (s: string) => void }): Promise<{ result: W1Result; detail: W1Detail }> {
  const reps = opts.quick ? 5 : 15;
  const targetMs = opts.quick ? 25 : 60;
  const ns = [0, ...W1_NS];
  const sides = {
    dsh: new Map(ns.map((n) => [n, dshScript(n)])),
    floor: new Map(ns.map((n) => [n, floorScript(n)])),
  };
  const run = {
    dsh: (n: number) => () => dshTurn(sides.dsh.get(n)!),
    floor: (n: number) => () => floorTurn(sides.floor.get(n)!),
  };
  const k = { dsh: new Map<number, number>(), floor: new Map<number, number>() };
  for (const n of ns) {
    k.dsh.set(n, await calibrate(run.dsh(n), targetMs));
    k.floor.set(n, await calibrate(run.floor(n), targetMs));
  }
  const times = { dsh: new Map<number, number[]>(), floor: new Map<number, number[]>() };
  for (let rep = 0; rep < reps; rep++) {
    // Interleaved, alternating which side goes first, a full GC before each sample.
    const order = rep % 2 ? (['floor', 'dsh'] as const) : (['dsh', 'floor'] as const);
    for (const n of ns) {
      for (const side of order) {
        collect();
        const ms = await sample(run[side](n), k[side].get(n)!);
        const list = times[side].get(n) ?? [];
        list.push(ms);
        times[side].set(n, list);
      }
    }
    opts.log(`  w1 rep ${rep + 1}/${reps}`);
  }
  const med = (side: 'dsh' | 'floor', n: number) => median(times[side].get(n)!);
  const result = {} as W1Result;
  const turnMs: W1Detail['turnMs'] = { dsh: {}, floor: {} };
  const modelStreamUs: Record<number, number> = {};
  const m0 = await modelStreamMs(0, 200);
  for (const n of ns) {
    turnMs.dsh[n] = med('dsh', n);
    turnMs.floor[n] = med('floor', n);
  }
  for (const n of W1_NS) {
    const dshUs = ((med('dsh', n) - med('dsh', 0)) * 1000) / n;
    const floorUs = ((med('floor', n) - med('floor', 0)) * 1000) / n;
    result[`n${n}`] = { dshUs, floorUs, ratio: dshUs / floorUs };
    modelStreamUs[n] = (((await modelStreamMs(n, n >= 64 ? 20 : 200)) - m0) * 1000) / n;
  }
  return { result, detail: { reps, turnMs, modelStreamUs } };
}
