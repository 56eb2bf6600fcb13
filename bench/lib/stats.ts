/** Small measurement helpers shared by the workloads. */

export const median = (xs: readonly number[]): number => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export const nowMs = (): number => performance.now();

/**
 * CPU time this process has used (user + system, all its threads: JIT and GC helpers included), in
 * ms. W1 measures cost per call with it: on a shared, loaded machine wall time also counts the time
 * the process waited for a core, which no code change affects.
 */
export const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Runs a full GC when the process was started with --expose-gc (npm run bench does). */
export function collect(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) {
    g();
    g();
  }
}

export const hasGc = (): boolean => typeof (globalThis as { gc?: unknown }).gc === 'function';

export const sleepMs = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export const round = (x: number, digits = 2): number => {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};
