/**
 * What playing one planned path against the real runtime returns: what was observed next to what
 * was planned (and, see `spec.oracle.ts`, next to what SPEC says).
 */
import { expect } from 'vitest';
import type { Recorder } from '../../src/testing/paths/observe.js';

/**
 * One comparison of a run: what the machine model planned (or, for checks named `SPEC: …`, what
 * the SPEC oracle requires), what the runtime did.
 */
export interface PathCheck {
  readonly what: string;
  readonly planned: unknown;
  readonly observed: unknown;
}

export interface PathRun {
  /** Every actor's microsteps during the run (for coverage). */
  readonly recorder: Recorder;
  readonly checks: readonly PathCheck[];
}

/** Fails with the check's name when the runtime did not do what the path planned or SPEC requires. */
export function expectChecks(run: PathRun): void {
  for (const c of run.checks) expect(c.observed, c.what).toEqual(c.planned);
}
