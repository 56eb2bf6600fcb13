/**
 * What playing one planned path against the real runtime returns: what was observed next to what
 * was planned (and, see `spec.oracle.ts`, next to what SPEC says).
 */
import { expect } from 'vitest';
import type { LogEvent } from '../../src/protocol/index.js';
import { judgeBySpec, SPEC_RULES } from '../../src/testing/explore/specOracle.js';
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

/** Rules of the SPEC oracle `dsh/testing` judges every explored run by that hold on any path's log (a path may fail a listener on purpose). */
const SESSION_RULES: ReadonlySet<string> = new Set([SPEC_RULES.pairs, SPEC_RULES.order, SPEC_RULES.deny]);

/** The check that a path's session log keeps the rules of dsh/testing's SPEC oracle (the oracle `explore` uses, not a copy). */
export function sessionRules(events: readonly LogEvent[]): PathCheck {
  return {
    what: 'SPEC (dsh/testing judgeBySpec): one result per call, commits in order, no deny undone',
    planned: [],
    observed: judgeBySpec({ events, bodies: [] })
      .filter((v) => SESSION_RULES.has(v.rule))
      .map((v) => `${v.rule}: ${v.message}`),
  };
}
