/**
 * Instructions per call, counted by valgrind: a measure of the W1 turn that does not move with the
 * machine's speed (this host's drifts by tens of per cent within a second, so timed A/Bs need many
 * repetitions to see 5 %). Each side runs under `valgrind --tool=callgrind` with V8's
 * `--predictable` (one thread: compilation and GC run on the main thread, in the same order every
 * run), twice: after `warm` turns, and after `warm + 40`; the difference ÷ (40 × N) is the
 * steady-state cost of one call, compilation done. Two runs of the same build agree to about 0.1 %.
 *
 *   node --import tsx -e "import('./bench/lib/build.ts').then(m => m.buildForBench('.'))"
 *   node --import tsx bench/instructions.ts [BUILD=bench/.build] [BASE_BUILD] [--warm=50] [--n=64]
 *
 * Prints dsh's and its machines alone's instructions per call (bench/lib/fixtures.ts,
 * bench/lib/machinesAlone.ts) and their ratio; with BASE_BUILD, the same for it and B ÷ A.
 * Needs valgrind (Debian: `apt-get install valgrind`); minutes, not seconds (about 1 s of valgrind
 * per turn at N=64). Instructions are not time: memory and cache effects are not counted (the
 * timed ratio runs higher than this one), so confirm a change in time with the full bench.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const [build = 'bench/.build', base] = args.filter((a) => !a.startsWith('--'));
const warm = flag('warm', 50);
const n = flag('n', 64);
const MEASURED = 40;

// The driver each valgrind run executes: `turns` turns of one side, nothing else.
const dir = mkdtempSync(join(tmpdir(), 'dsh-instructions-'));
const driver = join(dir, 'driver.mjs');
writeFileSync(
  driver,
  `const [root, side, n, turns] = process.argv.slice(2);
const fx = await import(new URL('bench/lib/fixtures.js', root));
const ma = await import(new URL('bench/lib/machinesAlone.js', root));
const script = fx.dshScript(+n);
const requests = ma.machineRequests(+n);
const turn = side === 'dsh' ? () => fx.dshTurn(script) : () => ma.machinesAloneBatch(requests);
for (let i = 0; i < +turns; i++) await turn();
`,
);

function collected(root: string, side: string, turns: number): number {
  const r = spawnSync('valgrind', ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, '--predictable', driver, root, side, String(n), String(turns)], { encoding: 'utf8' });
  if (r.error) throw new Error(`valgrind could not be started (${r.error.message}): install it (apt-get install valgrind)`);
  const m = /Collected : (\d+)/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`valgrind run of ${side} (${turns} turns) failed: ${r.stderr.slice(-400)}`);
  return Number(m[1]);
}

/** Steady-state instructions per call of one side of one build. */
function perCall(buildDir: string, side: 'dsh' | 'machines'): number {
  const root = pathToFileURL(resolve(buildDir) + '/').href;
  return (collected(root, side, warm + MEASURED) - collected(root, side, warm)) / MEASURED / n;
}

function measure(buildDir: string): { dsh: number; machines: number } {
  const dsh = perCall(buildDir, 'dsh');
  const machines = perCall(buildDir, 'machines');
  console.log(`${buildDir}: dsh ${Math.round(dsh).toLocaleString('en')} instructions per call, machines alone ${Math.round(machines).toLocaleString('en')}, dsh ÷ machines ×${(dsh / machines).toFixed(3)} (N=${n}, after ${warm} turns)`);
  return { dsh, machines };
}

try {
  const b = measure(build);
  if (base) {
    const a = measure(base);
    console.log(`B ÷ A: dsh ×${(b.dsh / a.dsh).toFixed(4)}, machines alone ×${(b.machines / a.machines).toFixed(4)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
