/**
 * W8 cold start: `dsh --version` as a user runs it (a new node process on the built bin), against
 * `node -e 0` (a new node process that does nothing) measured interleaved in the same run: what
 * dsh's own start adds to node's. Median wall time of the spawns, after one untimed warm-up of each.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { median } from '../lib/stats.js';

export interface W8Result {
  /** Median ms of `node <bin> --version`. */
  versionMs: number;
  /** Median ms of `node -e 0`. */
  nodeMs: number;
  /** versionMs ÷ nodeMs. */
  ratio: number;
}

export interface W8Detail {
  reps: number;
  /** The bin that ran, relative to the repository. */
  bin: string;
}

function spawnMs(args: string[]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`W8: node ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-300)}`);
  return ms;
}

/** `bin`: the compiled `dsh` entry (bench/.build/src/cli/bin.js or dist/src/cli/bin.js). */
export function runW8(options: { quick: boolean; bin: string; binLabel: string }): { result: W8Result; detail: W8Detail } | { notMeasured: string } {
  if (!existsSync(options.bin)) return { notMeasured: `no built bin at ${options.binLabel} (npm run build)` };
  const reps = options.quick ? 7 : 21;
  const version = [options.bin, '--version'];
  const nothing = ['-e', '0'];
  spawnMs(version);
  spawnMs(nothing);
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < reps; i++) {
    // Alternate which goes first, so a slow moment of the machine falls on both alike.
    if (i % 2 === 0) {
      a.push(spawnMs(version));
      b.push(spawnMs(nothing));
    } else {
      b.push(spawnMs(nothing));
      a.push(spawnMs(version));
    }
  }
  const versionMs = median(a);
  const nodeMs = median(b);
  return { result: { versionMs, nodeMs, ratio: versionMs / nodeMs }, detail: { reps, bin: options.binLabel } };
}
