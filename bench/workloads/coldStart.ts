/**
 * Cold start (row key `coldStart`; it was W8 before issue 16 took that name): a new node process
 * on the built `dsh` bin, against `node -e 0` (a new node process that does nothing), spawned
 * interleaved in the same run, after one untimed warm-up of each. Two measurements:
 *   - `dsh --version`: what dsh's own start adds to node's (reads package.json, nothing else);
 *   - `dsh run` on the embedded default, from the spawn to its first model request: the process
 *     runs in a fresh temp directory with `DSH_BENCH_EXIT_AT_FIRST_REQUEST=1`, which makes the
 *     embedded model print the time and exit as the first request arrives (target ≤ 400 ms).
 * Median wall time of the spawns.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from '../lib/stats.js';

/** The `dsh run` cold start target (issue 12.7). */
export const COLD_RUN_TARGET_MS = 400;

export interface ColdStartResult {
  /** Median ms of `node <bin> --version`. */
  versionMs: number;
  /** Median ms of `node -e 0`. */
  nodeMs: number;
  /** versionMs ÷ nodeMs. */
  ratio: number;
  /** Median ms of `node <bin> run PROMPT` until its first model request (the process exits there). */
  runMs: number;
  /** runMs ÷ nodeMs. */
  runRatio: number;
}

export interface ColdStartDetail {
  reps: number;
  /** The bin that ran, relative to the repository. */
  bin: string;
}

function spawnMs(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; expect?: RegExp } = {}): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], cwd: options.cwd, env: options.env });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`cold start: node ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-300)}`);
  if (options.expect && !options.expect.test(r.stderr)) throw new Error(`cold start: node ${args.join(' ')} did not reach the first model request: ${r.stderr.slice(-300)}`);
  return ms;
}

/** `bin`: the `dsh` command as it ships, bundled (bench/.build/cli/bin.js, or dist/cli/bin.js with --tsx). */
export function runColdStart(options: { quick: boolean; bin: string; binLabel: string }): { result: ColdStartResult; detail: ColdStartDetail } | { notMeasured: string } {
  if (!existsSync(options.bin)) return { notMeasured: `no built bin at ${options.binLabel} (npm run build)` };
  const reps = options.quick ? 7 : 21;
  const dir = mkdtempSync(join(tmpdir(), 'dsh-cold-'));
  try {
    writeFileSync(join(dir, 'README.md'), '# cold start\n');
    const env: NodeJS.ProcessEnv = { ...process.env, DSH_BENCH_EXIT_AT_FIRST_REQUEST: '1' };
    delete env.NODE_OPTIONS;
    const kinds: Array<() => number> = [
      () => spawnMs([options.bin, '--version']),
      () => spawnMs(['-e', '0']),
      () => spawnMs([options.bin, 'run', '--model', 'embedded', 'look around'], { cwd: dir, env, expect: /first model request at/ }),
    ];
    for (const k of kinds) k();
    const samples: number[][] = [[], [], []];
    for (let i = 0; i < reps; i++) {
      // Rotate which goes first, so a slow moment of the machine falls on all alike.
      for (let j = 0; j < kinds.length; j++) {
        const k = (i + j) % kinds.length;
        samples[k]!.push(kinds[k]!());
      }
    }
    const [versionMs, nodeMs, runMs] = samples.map(median) as [number, number, number];
    return { result: { versionMs, nodeMs, ratio: versionMs / nodeMs, runMs, runRatio: runMs / nodeMs }, detail: { reps, bin: options.binLabel } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
