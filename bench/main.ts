/**
 * Runs the workloads W1–W7, prints the table and writes bench/results.json (see bench/README.md).
 * Started by bench/run.ts (`npm run bench [-- --quick] [-- --tsx] [-- --only w1,w3]`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { renderTable, type Notes, type Results } from './lib/report.js';
import { hasGc, round } from './lib/stats.js';
import { runW1 } from './workloads/w1.js';
import { runW2, runW3, runW5 } from './workloads/timing.js';
import { runW4 } from './workloads/w4.js';
import { runW6 } from './workloads/w6.js';
import { runColdStart } from './workloads/coldStart.js';
import { runBundle } from './workloads/bundle.js';
import { runW8 } from './workloads/w8.js';
import { runStore } from './workloads/store.js';
import { runBashStart } from './workloads/bashStart.js';
import { runViewScale } from './workloads/viewScale.js';
import { runWire } from './workloads/wire.js';
import { runExploreBench } from './workloads/explore.js';
import { runWhereTimeGoes } from './workloads/whereTimeGoes.js';

const here = dirname(fileURLToPath(import.meta.url));
const compiled = import.meta.url.endsWith('.js');

/** The repository root: the nearest directory up whose package.json is dsh's. */
function repoRoot(): string {
  for (let d = here; d !== dirname(d); d = dirname(d)) {
    const pkg = join(d, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'dsh') return d;
  }
  throw new Error('bench: repository root not found');
}

function runW7(log: (s: string) => void) {
  const script = join(here, 'workloads', compiled ? 'w7-child.js' : 'w7-child.ts');
  const args = compiled ? ['--expose-gc', script, '100'] : ['--expose-gc', '--import', 'tsx', script, '100'];
  log('  w7 spilling 100 MiB in a child process');
  const child = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 20 });
  const last = child.stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(last) as
      | { ok: true; peakRssOverInput: number; ms: number; baselineRss: number; peakRss: number; logBytes: number; pageReadMs: number; pageStoreBytes: number }
      | { ok: false; reason: string };
  } catch {
    return { ok: false as const, reason: `the W7 child printed no result (exit ${child.status}): ${child.stderr.slice(-500)}` };
  }
}

export async function main(argv: readonly string[]): Promise<void> {
  const quick = argv.includes('--quick');
  const onlyArg = argv.find((a) => a.startsWith('--only'));
  const only = onlyArg ? new Set((onlyArg.includes('=') ? onlyArg.split('=')[1]! : argv[argv.indexOf(onlyArg) + 1] ?? '').split(',')) : undefined;
  const want = (w: string) => !only || only.has(w);
  const log = (s: string) => process.stderr.write(`${s}\n`);
  if (!hasGc()) log('bench: run with --expose-gc (npm run bench does) for W4 and stable W1 samples');
  const root = repoRoot();
  const started = Date.now();

  const results: Results = {
    node: process.version,
    date: new Date().toISOString(),
    quick,
    w1: null,
    w2: null,
    w3: null,
    w4: null,
    w5: null,
    w6: null,
    w7: { spillMiB: 100, peakRssOverInput: null, ms: null, logBytesPerSpill: null, pageReadMs: null },
    coldStart: null,
    bashStart: null,
    viewScale: null,
    wire: null,
    explore: null,
    bundle: null,
    profile: null,
  };
  // How quiet the machine was: the 1-minute load average when the run started, and the cores it has.
  const notes: Notes = { mode: compiled ? 'compiled (tsc transpile, bench/.build)' : 'tsx (sources, esbuild keepNames)', quiet: { load1: loadavg()[0]!, cores: availableParallelism() } };

  if (want('w1')) {
    log('W1 overhead per call (interleaved with the floor)');
    const { result, detail } = await runW1({ quick, log });
    results.w1 = result;
    notes.w1 = detail;
  }
  if (want('profile')) {
    log('where W1\'s time goes at N=64: a sampled CPU profile of dsh, its machines alone, and dsh with telemetry on');
    // The directory whose machines/ and src/ run: bench/.build/ compiled, the repository with --tsx.
    results.profile = await runWhereTimeGoes({ quick, base: pathToFileURL(join(here, '..')).href + '/' });
  }
  if (want('w2')) {
    log('W2 parallel efficiency');
    const { result, floorWallOverIdeal, skeletonWallOverIdeal, breakdown, reps, jsonl } = await runW2({ quick });
    results.w2 = result;
    notes.w2 = { reps, floorWallOverIdeal, skeletonWallOverIdeal, breakdown, jsonl };
  }
  if (want('w3')) {
    log('W3 commit lag under skew');
    const { result, reps, worstMs } = await runW3({ quick });
    results.w3 = result;
    notes.w3 = { reps, worstMs };
  }
  if (want('w4')) {
    log('W4 memory');
    const { result, detail } = await runW4({ quick, log });
    results.w4 = result;
    notes.w4 = detail;
  }
  if (want('w5')) {
    log('W5 streaming dispatch');
    const { result, reps, jsonl } = await runW5({ quick });
    results.w5 = result;
    notes.w5 = { reps, jsonl };
  }
  if (want('w6')) {
    log('W6 JSONL log');
    const { result, detail } = await runW6({ quick, log });
    results.w6 = result;
    notes.w6 = detail;
  }
  if (want('w7')) {
    const r = runW7(log);
    if (r.ok) {
      results.w7 = { spillMiB: 100, peakRssOverInput: r.peakRssOverInput, ms: r.ms, logBytesPerSpill: r.logBytes, pageReadMs: r.pageReadMs };
      notes.w7 = { baselineRssMiB: r.baselineRss / 2 ** 20, peakRssMiB: r.peakRss / 2 ** 20, pageStoreBytes: r.pageStoreBytes };
    } else {
      notes.w7 = { notMeasured: r.reason };
    }
  }
  if (want('coldStart')) {
    log('cold start of the built `dsh --version`, and of `dsh run` to its first model request');
    // Compiled: the bench's own build of the CLI, bundled as `npm run build` bundles dist/cli/
    // (scripts/bundleCli.ts); with --tsx: dist/cli/ itself.
    const bin = compiled ? join(here, '..', 'cli', 'bin.js') : join(root, 'dist', 'cli', 'bin.js');
    const r = runColdStart({ quick, bin, binLabel: compiled ? 'bench/.build/cli/bin.js' : 'dist/cli/bin.js' });
    if ('result' in r) {
      results.coldStart = r.result;
      notes.coldStart = r.detail;
    } else {
      notes.coldStart = r;
    }
  }
  if (want('bashStart')) {
    log('bash cold start: a `true` call sandboxed (workspace-write) and not (full-access)');
    const r = await runBashStart({ quick });
    if ('result' in r) {
      results.bashStart = r.result;
      notes.bashStart = { reps: r.reps };
    } else {
      notes.bashStart = r;
    }
  }
  if (want('viewScale')) {
    log('session view at scale: a 5,000-call turn with and without createSessionView');
    const r = await runViewScale({ quick });
    results.viewScale = r.result;
    notes.viewScale = { reps: r.reps };
  }
  if (want('wire')) {
    log('session wire protocol: events to SSE clients (throughput, latency), memory per idle connection');
    results.wire = (await runWire({ quick })).result;
  }
  if (want('explore')) {
    log('explore (dsh/testing): runs per second, a three-tool agent with two listeners, crashes included');
    const r = await runExploreBench({ quick });
    results.explore = r.result;
    notes.explore = { reps: r.reps };
  }
  if (want('bundle')) {
    log('browser bundles of the `dsh` and `dsh/react` entries (Vite, minified, gzip -9)');
    results.bundle = await runBundle({ root, detail: true });
  }
  if (want('w8')) {
    log('W8 flat per-step cost; resume from a checkpoint');
    const { result, detail } = await runW8({ quick, log });
    results.w8 = result;
    notes.w8 = detail;
  }
  if (want('store')) {
    log('session store: append latency (Postgres, JSONL), turns per second with 1 and 2 dsh workers');
    const bin = compiled ? [process.execPath, join(here, '..', 'src', 'cli', 'bin.js')] : [process.execPath, '--import', 'tsx', join(root, 'src', 'cli', 'bin.ts')];
    const r = await runStore({ quick, root, bin, log });
    if ('result' in r) {
      results.store = r.result;
      notes.store = r.detail;
    } else {
      notes.store = r;
    }
  }
  notes.seconds = (Date.now() - started) / 1000;

  const rounded = roundDeep(results) as Results;
  const table = renderTable(rounded, notes);
  console.log(table);
  if (!only) {
    writeFileSync(join(root, 'bench', 'results.json'), `${JSON.stringify(rounded, null, 2)}\n`);
    log(`wrote bench/results.json (${notes.seconds.toFixed(0)} s)`);
    if (!quick) updateReadme(join(root, 'docs', 'benchmarks.md'), table);
  } else {
    log('--only: bench/results.json left as it was');
  }
}

/** Puts the latest full run's table between the markers of docs/benchmarks.md. */
function updateReadme(path: string, table: string): void {
  if (!existsSync(path)) return;
  const text = readFileSync(path, 'utf8');
  const start = '<!-- bench:table:start -->';
  const end = '<!-- bench:table:end -->';
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) return;
  writeFileSync(path, `${text.slice(0, a + start.length)}\n${table}\n${text.slice(b)}`);
}

function roundDeep(v: unknown): unknown {
  if (typeof v === 'number') return Math.abs(v) >= 100 ? Math.round(v) : round(v, 2);
  if (Array.isArray(v)) return v.map(roundDeep);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, roundDeep(x)]));
  return v;
}

// Run directly (the compiled build is started as a child by bench/run.ts).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
