/**
 * Where the time goes (row key `profile`; issue 33 item 7: "where a target cannot be met, show with
 * a profile where the time goes"). V8's sampling CPU profiler, started in this process through
 * `node:inspector`, over W1 turns at N=64 (bench/lib/fixtures.ts) run three ways one after the
 * other: dsh; its machines alone (bench/lib/machinesAlone.ts: the scheduler and one toolCall actor
 * per call, every stage stubbed); dsh with OpenTelemetry on (the SDK, as W1's telemetry row sets it
 * up). Each sample's self time is charged to what was running ({@link AREAS}: zod apart, as the
 * validation of every call's arguments runs in it) and shown per call:
 * sampled CPU of all the turns ÷ (turns × N), so a turn's fixed cost (its steps, its runtime) is
 * spread over its calls as in W1's µs per call.
 *
 * The sides run in turn, not interleaved: their absolute µs drift with the machine like any one
 * sample; the split of each side, and the difference between two sides by area, is what to read.
 */
import { Session } from 'node:inspector/promises';
import { dshScript, dshTurn } from '../lib/fixtures.js';
import { machineRequests, machinesAloneBatch } from '../lib/machinesAlone.js';
import { sdkTelemetry } from '../lib/telemetry.js';

/** What a sample's self time is charged to. */
export const AREAS = ['xstate', 'gc', 'machines', 'dsh', 'telemetry', 'zod', 'otel', 'node', 'other'] as const;
export type Area = (typeof AREAS)[number];

/** How the table names each area. */
export const AREA_LABELS: Record<Area, string> = {
  xstate: 'XState',
  gc: 'GC',
  machines: 'dsh machines/',
  // src/ but its telemetry: the runtime, its log, the pipeline, the scripted model the turn reads.
  dsh: 'dsh src/',
  telemetry: 'dsh src/runtime/telemetry/',
  zod: 'zod',
  otel: '@opentelemetry/*',
  node: 'Node internals',
  // The bench harness (bench/), other packages, V8 outside JavaScript (`(program)`).
  other: 'other',
};

export interface ProfiledSide {
  /** Sampled CPU µs per call, by area. */
  usPerCall: Record<Area, number>;
  /** Their sum. */
  totalUsPerCall: number;
}

export interface WhereTimeGoesResult {
  n: number;
  /** Profiled turns per side (after untimed warm-up turns). */
  turns: number;
  dsh: ProfiledSide;
  machines: ProfiledSide;
  telemetry: ProfiledSide;
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string } }>;
  samples?: number[];
  timeDeltas?: number[];
}

/**
 * The area of a profile node: `base` is the URL of the directory holding the code the bench runs
 * (bench/.build/ for the compiled build, the repository with --tsx), whose machines/ and src/ are dsh's.
 */
export function areaOf(url: string, functionName: string, base: string): Area {
  if (!url) return functionName === '(garbage collector)' ? 'gc' : 'other';
  if (url.includes('/node_modules/xstate/')) return 'xstate';
  if (url.includes('/node_modules/zod/')) return 'zod';
  if (url.includes('/node_modules/@opentelemetry/')) return 'otel';
  if (url.startsWith('node:')) return 'node';
  if (url.includes('/node_modules/') || !url.startsWith(base)) return 'other';
  const rel = url.slice(base.length);
  if (rel.startsWith('machines/')) return 'machines';
  if (rel.startsWith('src/runtime/telemetry/')) return 'telemetry';
  if (rel.startsWith('src/')) return 'dsh';
  return 'other';
}

/** Self time of a profile by area, in µs. */
export function selfTimeByArea(profile: CpuProfile, base: string): Record<Area, number> {
  const byArea = Object.fromEntries(AREAS.map((a) => [a, 0])) as Record<Area, number>;
  const areaById = new Map(profile.nodes.map((n) => [n.id, areaOf(n.callFrame.url, n.callFrame.functionName, base)]));
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) byArea[areaById.get(samples[i]!) ?? 'other'] += deltas[i] ?? 0;
  return byArea;
}

async function profiled(session: Session, base: string, turns: number, n: number, turn: () => Promise<void>): Promise<ProfiledSide> {
  for (let i = 0; i < Math.max(10, turns / 5); i++) await turn();
  await session.post('Profiler.start');
  for (let i = 0; i < turns; i++) await turn();
  const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
  const total = selfTimeByArea(profile, base);
  const usPerCall = Object.fromEntries(AREAS.map((a) => [a, total[a] / (turns * n)])) as Record<Area, number>;
  return { usPerCall, totalUsPerCall: AREAS.reduce((s, a) => s + usPerCall[a], 0) };
}

/** `base`: the URL (ending in `/`) of the directory whose machines/ and src/ the bench runs. */
export async function runWhereTimeGoes(o: { quick: boolean; base: string }): Promise<WhereTimeGoesResult> {
  const n = 64;
  const turns = o.quick ? 40 : 200;
  const script = dshScript(n);
  const requests = machineRequests(n);
  const telemetry = sdkTelemetry();
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    const dsh = await profiled(session, o.base, turns, n, () => dshTurn(script));
    const machines = await profiled(session, o.base, turns, n, () => machinesAloneBatch(requests));
    const withTelemetry = await profiled(session, o.base, turns, n, () => dshTurn(script, undefined, telemetry));
    return { n, turns, dsh, machines, telemetry: withTelemetry };
  } finally {
    await session.post('Profiler.disable').catch(() => undefined);
    session.disconnect();
  }
}
