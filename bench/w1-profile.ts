/**
 * Runs the W1 dsh turn in a loop for a CPU profile:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/w1-profile.ts [N=64] [turns=200] [sdk|noop]
 *   node --import tsx bench/profile-summary.ts /tmp/prof
 *
 * (Profiling the tsx-loaded sources shows esbuild's `__name` helper; for the compiled build:
 * `node --import tsx -e "import('./bench/lib/build.ts').then(m => m.buildForBench('.'))"`, then
 * `node --cpu-prof --cpu-prof-dir=/tmp/prof bench/.build/bench/w1-profile.js`.) A third argument
 * turns telemetry on as W1's telemetry rows do: `sdk` (the OpenTelemetry SDK) or `noop` (the API,
 * no provider registered).
 */
import { dshScript, dshTurn } from './lib/fixtures.js';
import { noopTelemetry, sdkTelemetry } from './lib/telemetry.js';

const n = Number(process.argv[2] ?? 64);
const turns = Number(process.argv[3] ?? 200);
const telemetry = process.argv[4] === 'sdk' ? sdkTelemetry() : process.argv[4] === 'noop' ? noopTelemetry() : undefined;
const script = dshScript(n);
for (let i = 0; i < 20; i++) await dshTurn(script, undefined, telemetry);
const t0 = performance.now();
for (let i = 0; i < turns; i++) await dshTurn(script, undefined, telemetry);
const ms = (performance.now() - t0) / turns;
console.error(`N=${n}: ${ms.toFixed(3)} ms per turn, ${((ms * 1000) / Math.max(n, 1)).toFixed(1)} µs per call (whole turn ÷ N)`);
