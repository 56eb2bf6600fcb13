/**
 * Interleaved A/B of two builds of dsh in one process, in CPU time: how issue 17's changes were
 * measured. Each side is a bench build (`bench/.build`, see bench/lib/build.ts) of a different
 * tree; both are loaded side by side and sampled alternately, so the machine's drift falls on both.
 *
 *   node --import tsx -e "import('./bench/lib/build.ts').then(m => m.buildForBench('.'))"
 *   cp -r bench/.build /tmp/base-build          # the "before" side; then change, build again
 *   node --import tsx bench/ab.ts /tmp/base-build bench/.build [N=64] [reps=25] [--machines]
 *
 * Default: the W1 turn (bench/lib/fixtures.ts): µs per call = (turn(N) − turn(0)) / N per side and
 * repetition, B/A per repetition, medians; also the N=0 turn (one text-only step). `--machines`:
 * the scheduler and call actors alone, every stage stubbed (bench/lib/machinesAlone.ts), which
 * isolates what a change to machines/ does. `--telemetry` (issue 27): side B runs the same W1 turn
 * with OpenTelemetry on (bench/lib/telemetry.ts: the SDK, spans and metrics), `--noop-telemetry`
 * with the API's no-op tracer; give the same build twice. On this shared machine, read B/A under
 * ±5 % as noise.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cpuMs, median } from './lib/stats.js';

type Turn = () => Promise<void>;
interface Side {
  /** One sample's worth of work at N calls (and at N=0 for the turn). */
  withCalls: Turn;
  empty?: Turn;
}

const args = process.argv.slice(2);
const machines = args.includes('--machines');
const telemetry = args.includes('--telemetry') ? 'sdk' : args.includes('--noop-telemetry') ? 'noop' : undefined;
const [a, b, nArg, repsArg] = args.filter((x) => !x.startsWith('--'));
if (!a || !b) throw new Error('usage: bench/ab.ts A_BUILD B_BUILD [N=64] [reps=25] [--machines]');
const n = Number(nArg ?? 64);
const reps = Number(repsArg ?? 25);

async function load(build: string, withTelemetry = false): Promise<Side> {
  const url = (p: string) => pathToFileURL(resolve(build, p)).href;
  if (machines) {
    const m = (await import(url('bench/lib/machinesAlone.js'))) as { machineRequests(n: number): unknown[]; machinesAloneBatch(r: unknown[]): Promise<void> };
    const requests = m.machineRequests(n);
    return { withCalls: () => m.machinesAloneBatch(requests) };
  }
  const f = (await import(url('bench/lib/fixtures.js'))) as { dshScript(n: number): unknown; dshTurn(s: unknown, inspect?: unknown, telemetry?: unknown): Promise<void> };
  const withCalls = f.dshScript(n);
  const none = f.dshScript(0);
  if (withTelemetry && telemetry) {
    const t = (await import(url('bench/lib/telemetry.js'))) as { sdkTelemetry(): unknown; noopTelemetry(): unknown };
    const options = () => (telemetry === 'sdk' ? t.sdkTelemetry() : t.noopTelemetry());
    return { withCalls: () => f.dshTurn(withCalls, undefined, options()), empty: () => f.dshTurn(none, undefined, options()) };
  }
  return { withCalls: () => f.dshTurn(withCalls), empty: () => f.dshTurn(none) };
}

async function cpuPer(turn: Turn, k: number): Promise<number> {
  const t0 = cpuMs();
  for (let i = 0; i < k; i++) await turn();
  return ((cpuMs() - t0) * 1000) / k;
}

const sides = [await load(a), await load(b, true)];
for (const s of sides) for (let i = 0; i < 30; i++) await (s.empty ?? s.withCalls)(), await s.withCalls();
const kCalls = Math.max(3, Math.round(60_000 / (n * 200 + 500)));
const perCall: number[][] = [[], []];
const empty: number[][] = [[], []];
const ratios: number[] = [];
for (let rep = 0; rep < reps; rep++) {
  const us: number[] = [];
  for (const k of rep % 2 ? [1, 0] : [0, 1]) {
    const s = sides[k]!;
    const full = await cpuPer(s.withCalls, kCalls);
    const base = s.empty ? await cpuPer(s.empty, 60) : 0;
    us[k] = (full - base) / n;
    perCall[k]!.push(us[k]!);
    empty[k]!.push(base);
  }
  ratios.push(us[1]! / us[0]!);
}
const f1 = (x: number) => x.toFixed(1);
console.log(
  `${machines ? 'machines alone' : 'W1 turn'} N=${n}, ${reps} reps (CPU): A ${f1(median(perCall[0]!))} µs/call, B ${f1(median(perCall[1]!))} µs/call, ` +
    `B/A ${median(ratios).toFixed(3)} (reps from ${Math.min(...ratios).toFixed(2)} to ${Math.max(...ratios).toFixed(2)})` +
    (machines ? '' : `; N=0 turn: A ${median(empty[0]!).toFixed(0)} µs, B ${median(empty[1]!).toFixed(0)} µs`),
);
