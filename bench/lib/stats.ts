/** Small measurement helpers shared by the workloads. */

export const median = (xs: readonly number[]): number => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export const nowMs = (): number => performance.now();

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
