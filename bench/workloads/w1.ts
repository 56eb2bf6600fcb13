/**
 * W1 overhead: a 2-step turn in which the scripted model asks for N no-op calls, then answers, run
 * by dsh (runtime, machines, one pre-execute listener, in-memory log) and by the hand-written
 * floor, interleaved in one process. µs per call = (turn(N) − turn(0)) / N from medians.
 */
import { scriptedModel } from '../../src/adapters/model/scriptedModel.js';
import { countingInspector, dshScript, dshTurn, floorScript, floorTurn } from '../lib/fixtures.js';
import { machineRequests, machinesAloneBatch } from '../lib/machinesAlone.js';
import { skeletonTurn } from '../lib/skeleton.js';
import { cpuMs, median, nowMs } from '../lib/stats.js';
import { noopTelemetry, sdkTelemetry } from '../lib/telemetry.js';
import { agentsCoreTurn, agentsScript, aiSdkTurn } from '../lib/peers.js';

export const W1_NS = [1, 8, 64, 256] as const;

export interface W1Point {
  dshUs: number;
  floorUs: number;
  ratio: number;
  /** N=64 only: µs per call with an inspector attached to the turn ÷ µs per call without (each sample beside a dsh sample). */
  inspectedRatio?: number;
  /** N=64 only: µs per call with telemetry on (the OpenTelemetry SDK, spans and metrics) ÷ without (issue 27). */
  telemetryRatio?: number;
  /** N=64 only: µs per call with telemetry given `@opentelemetry/api` and no provider registered ÷ without. */
  noopTelemetryRatio?: number;
  /** N=64 only: dsh's µs per call ÷ the AI SDK's `streamText` on the same turn (bench/lib/peers.ts), each sample beside a dsh sample. */
  aiSdkRatio?: number;
  /** N=64 only: dsh's µs per call ÷ `@openai/agents-core`'s `Runner` on the same turn, each sample beside a dsh sample. */
  agentsCoreRatio?: number;
  /** N=64 and N=256: dsh's µs per call ÷ its machines alone, every stage stubbed (issue 33: ≤ 1.5). */
  machinesRatio?: number;
  /** N=256 only: dsh's µs per call at N=256 ÷ at N=64, each N=256 sample beside an N=64 one (flat per-call cost). */
  flatRatio?: number;
}
export type W1Result = Record<'n1' | 'n8' | 'n64' | 'n256', W1Point>;

/** The N at which the cost of inspection is measured (with N=0, for the per-call difference). */
export const W1_INSPECTED_N = 64;

export interface W1Detail {
  reps: number;
  /** µs per call of the cheapest actor-per-call XState skeleton (bench/lib/skeleton.ts), same runs. */
  skeletonUs: Record<number, number>;
  /** µs per call of dsh's scheduler + toolCall machines alone, every stage stubbed (bench/lib/machinesAlone.ts), same runs. */
  machinesUs: Record<number, number>;
  /** Median ms per whole turn, by N, for each side. */
  turnMs: { dsh: Record<number, number>; floor: Record<number, number> };
  /** Per call cost of the scripted model's stream alone (part of dsh's number, not the floor's). */
  modelStreamUs: Record<number, number>;
  /** µs per call at N=64 with an inspector attached (`countingInspector`). */
  inspectedUs?: number;
  /** µs per call at N=64 with telemetry on (SDK) and with the API's no-op tracer. */
  telemetryUs?: number;
  noopTelemetryUs?: number;
  /** µs per call at N=64 of the two framework peers (bench/lib/peers.ts). */
  aiSdkUs?: number;
  agentsCoreUs?: number;
}

/** Runs `turn` k times; returns CPU ms per turn (see `cpuMs`). */
async function sample(turn: () => Promise<void>, k: number): Promise<number> {
  const t0 = cpuMs();
  for (let i = 0; i < k; i++) await turn();
  return (cpuMs() - t0) / k;
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
  const targetMs = opts.quick ? 30 : 100;
  const ns = [0, ...W1_NS];
  type Side = 'dsh' | 'floor' | 'skeleton' | 'machines' | 'dshInspected' | 'dshTelemetry' | 'dshNoopTelemetry' | 'aiSdk' | 'agentsCore';
  const SIDES: readonly Side[] = ['dsh', 'floor', 'skeleton', 'machines'];
  // The inspected turn is sampled only where its ratio is taken (N=0 and N=64), in the same rotation.
  // So are the peers: the same turn through the AI SDK and agents-core.
  const sidesAt = (n: number): readonly Side[] => (n === 0 || n === W1_INSPECTED_N ? [...SIDES, 'dshInspected', 'dshTelemetry', 'dshNoopTelemetry', 'aiSdk', 'agentsCore'] : SIDES);
  const dshScripts = new Map(ns.map((n) => [n, dshScript(n)]));
  const floorScripts = new Map(ns.map((n) => [n, floorScript(n)]));
  const requests = new Map(ns.map((n) => [n, machineRequests(n)]));
  const agentsScripts = new Map(ns.map((n) => [n, agentsScript(n)]));
  const run: Record<Side, (n: number) => () => Promise<void>> = {
    dsh: (n) => () => dshTurn(dshScripts.get(n)!),
    floor: (n) => () => floorTurn(floorScripts.get(n)!),
    skeleton: (n) => () => skeletonTurn(n),
    machines: (n) => () => machinesAloneBatch(requests.get(n)!),
    dshInspected: (n) => () => dshTurn(dshScripts.get(n)!, countingInspector()),
    dshTelemetry: (n) => () => dshTurn(dshScripts.get(n)!, undefined, sdkTelemetry()),
    dshNoopTelemetry: (n) => () => dshTurn(dshScripts.get(n)!, undefined, noopTelemetry()),
    aiSdk: (n) => () => aiSdkTurn(dshScripts.get(n)!),
    agentsCore: (n) => () => agentsCoreTurn(agentsScripts.get(n)!),
  };
  const k = new Map<string, number>();
  for (const n of ns) for (const side of sidesAt(n)) k.set(`${side}${n}`, await calibrate(run[side](n), targetMs));

  // times[side][n][rep] = ms per turn. Interleaved: every rep samples every N on every side, in a
  // rotating side order, with an untimed warm-up before each sample; per-call costs and the dsh/floor ratio
  // are taken within each rep (the machine's speed drifts between reps), then the median over reps.
  const times: Record<Side, Map<number, number[]>> = {
    dsh: new Map(),
    floor: new Map(),
    skeleton: new Map(),
    machines: new Map(),
    dshInspected: new Map(),
    dshTelemetry: new Map(),
    dshNoopTelemetry: new Map(),
    aiSdk: new Map(),
    agentsCore: new Map(),
  };
  // A ratio side (every side a "÷ dsh" row compares with dsh) is sampled next to a dsh sample of
  // its own, dsh first in even reps and second in odd ones: this machine's speed drifts by tens of
  // per cent within a second, so a ratio of samples taken a whole rotation apart measured the drift.
  const pairedAt = (n: number): readonly Side[] =>
    n === W1_INSPECTED_N ? ['machines', 'dshInspected', 'dshTelemetry', 'dshNoopTelemetry', 'aiSdk', 'agentsCore'] : n === 256 ? ['machines'] : [];
  /** pairedDsh[side][n][rep]: ms per dsh turn, sampled beside that side's sample. */
  const pairedDsh = new Map<Side, Map<number, number[]>>();
  const besideOf = (side: Side): Map<number, number[]> => {
    let m = pairedDsh.get(side);
    if (!m) pairedDsh.set(side, (m = new Map()));
    return m;
  };
  /** ms per dsh turn at N=64, sampled beside each rep's dsh sample at N=256 (for the flat ratio). */
  const besideFlat = new Map<number, number[]>();
  const take = async (side: Side, n: number, into: Map<number, number[]>) => {
    // Steady state, no forced GC (each side pays for its own garbage, as in a running process):
    // an untimed fifth of the sample first, so the other side's young garbage is collected
    // on that side's time.
    const kk = k.get(`${side}${n}`)!;
    await sample(run[side](n), Math.max(1, Math.round(kk / 5)));
    const ms = await sample(run[side](n), kk);
    const list = into.get(n) ?? [];
    list.push(ms);
    into.set(n, list);
  };
  for (let rep = 0; rep < reps; rep++) {
    for (const n of ns) {
      const sides = sidesAt(n);
      for (let i = 0; i < sides.length; i++) {
        const side = sides[(rep + i) % sides.length]!;
        // The flat ratio (N=256 ÷ N=64) from two dsh samples side by side, too.
        const besideAt = side === 'dsh' && n === 256 ? W1_INSPECTED_N : pairedAt(n).includes(side) ? n : undefined;
        if (besideAt === undefined) {
          await take(side, n, times[side]);
          continue;
        }
        const beside = besideAt !== n ? besideFlat : besideOf(side);
        if (rep % 2 === 0) await take('dsh', besideAt, beside);
        await take(side, n, times[side]);
        if (rep % 2 === 1) await take('dsh', besideAt, beside);
      }
    }
    opts.log(`  w1 rep ${rep + 1}/${reps}`);
  }
  /** µs per call of one `side` sample of `ms` per turn at N=n in repetition `rep` (less that side's N=0 turn in the rep). */
  const usPerCall = (side: Side, ms: number, rep: number, n: number) => ((ms - times[side].get(0)![rep]!) * 1000) / n;
  const perCall = (side: Side, n: number) => times[side].get(n)!.map((ms, rep) => usPerCall(side, ms, rep, n));
  /** Per rep, µs per call of `side` ÷ µs per call of the dsh sample taken beside it. */
  const besideDsh = (side: Side, n: number): number[] => {
    const own = perCall(side, n);
    return pairedDsh.get(side)!.get(n)!.map((ms, rep) => own[rep]! / usPerCall('dsh', ms, rep, n));
  };
  const result = {} as W1Result;
  const turnMs: W1Detail['turnMs'] = { dsh: {}, floor: {} };
  const modelStreamUs: Record<number, number> = {};
  const skeletonUs: Record<number, number> = {};
  const machinesUs: Record<number, number> = {};
  for (const n of ns) {
    turnMs.dsh[n] = median(times.dsh.get(n)!);
    turnMs.floor[n] = median(times.floor.get(n)!);
  }
  const m0 = await modelStreamMs(0, 200);
  for (const n of W1_NS) {
    const d = perCall('dsh', n);
    const f = perCall('floor', n);
    result[`n${n}`] = { dshUs: median(d), floorUs: median(f), ratio: median(d.map((x, rep) => x / f[rep]!)) };
    skeletonUs[n] = median(perCall('skeleton', n));
    machinesUs[n] = median(perCall('machines', n));
    modelStreamUs[n] = (((await modelStreamMs(n, n >= 64 ? 20 : 200)) - m0) * 1000) / n;
  }
  const inspected = perCall('dshInspected', W1_INSPECTED_N);
  const at = result[`n${W1_INSPECTED_N}`];
  at.inspectedRatio = median(besideDsh('dshInspected', W1_INSPECTED_N));
  const telemetry = perCall('dshTelemetry', W1_INSPECTED_N);
  const noop = perCall('dshNoopTelemetry', W1_INSPECTED_N);
  at.telemetryRatio = median(besideDsh('dshTelemetry', W1_INSPECTED_N));
  at.noopTelemetryRatio = median(besideDsh('dshNoopTelemetry', W1_INSPECTED_N));
  const aiSdk = perCall('aiSdk', W1_INSPECTED_N);
  const agentsCore = perCall('agentsCore', W1_INSPECTED_N);
  // The peers' rows say dsh ÷ peer: the inverse of each rep's peer ÷ dsh.
  at.aiSdkRatio = median(besideDsh('aiSdk', W1_INSPECTED_N).map((x) => 1 / x));
  at.agentsCoreRatio = median(besideDsh('agentsCore', W1_INSPECTED_N).map((x) => 1 / x));
  for (const n of [W1_INSPECTED_N, 256] as const) result[`n${n}`].machinesRatio = median(besideDsh('machines', n).map((x) => 1 / x));
  const at256 = perCall('dsh', 256);
  result.n256.flatRatio = median(besideFlat.get(W1_INSPECTED_N)!.map((ms, rep) => at256[rep]! / usPerCall('dsh', ms, rep, W1_INSPECTED_N)));
  return {
    result,
    detail: {
      reps,
      skeletonUs,
      machinesUs,
      turnMs,
      modelStreamUs,
      inspectedUs: median(inspected),
      telemetryUs: median(telemetry),
      noopTelemetryUs: median(noop),
      aiSdkUs: median(aiSdk),
      agentsCoreUs: median(agentsCore),
    },
  };
}
