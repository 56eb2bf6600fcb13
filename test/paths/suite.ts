/**
 * What every machine's path suite provides: its planned paths, and a way to play one against the
 * real runtime that returns what was observed next to what was planned.
 */
import { expect } from 'vitest';
import type { Recorder } from './observe.js';

/** One comparison of a run: what the machine model planned, what the runtime did. */
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

export interface PathSuite {
  /** The machine's name in `machineRegistry`. */
  readonly machine: string;
  /** The runs to make: a name (unique in the suite) and how to make it. */
  runs(): ReadonlyArray<{ readonly name: string; readonly run: () => Promise<PathRun> }>;
}

/** Fails with the check's name when the runtime did not do what the path planned. */
export function expectChecks(run: PathRun): void {
  for (const c of run.checks) expect(c.observed, c.what).toEqual(c.planned);
}
