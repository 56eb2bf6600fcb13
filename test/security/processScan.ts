import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessInfo {
  readonly pid: number;
  /** argv joined with spaces (argv[0] as the process set it, e.g. by `exec -a`). */
  readonly args: string;
}

/**
 * Live (non-zombie) processes whose argv mentions `needle`, from a /proc scan (no `ps` needed).
 * A process that exits mid-scan is skipped.
 */
export function liveProcesses(needle: string): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter((a) => a !== '').join(' ');
      if (!args.includes(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2).charAt(0);
      if (state === 'Z' || state === 'X') continue;
      found.push({ pid: Number(name), args });
    } catch {
      // Gone between readdir and read.
    }
  }
  return found;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `test` holds or the (generous, hang-only) bound passes; returns the last scan. */
export async function waitForProcesses(needle: string, test: (ps: ProcessInfo[]) => boolean, boundMs = 30_000): Promise<ProcessInfo[]> {
  const until = Date.now() + boundMs;
  let ps = liveProcesses(needle);
  while (!test(ps) && Date.now() < until) {
    await pause(100);
    ps = liveProcesses(needle);
  }
  return ps;
}

/** SIGKILLs every live process whose argv mentions `needle` (only ever a test's own unique token). */
export function killProcesses(needle: string): number[] {
  const killed: number[] = [];
  for (const p of liveProcesses(needle)) {
    try {
      process.kill(p.pid, 'SIGKILL');
      killed.push(p.pid);
    } catch {
      // Already gone.
    }
  }
  return killed;
}
