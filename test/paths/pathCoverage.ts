/**
 * Coverage of one machine, built from the runs its own `<name>.paths.test.ts` already made: each
 * path test records what its run was observed to do, and the file's last test checks that, taken
 * together, the runs reached every state and took every transition of the machine. No path is
 * played twice, and no test bundles many runs (nothing depends on how fast the machine is).
 *
 * Vitest runs the tests of a file in order, in one worker: the coverage test comes after every
 * path test of its file. It fails, naming what is missing, if a path test did not run before it
 * (the file was filtered or shuffled) rather than report a coverage it did not see.
 */
import type { AnyStateMachine } from 'xstate';
import { expect, it } from 'vitest';
import { machineRegistry } from '../../machines/registry.js';
import { CoverageMap, formatCounts, uncovered, type MachineCoverage } from '../../src/testing/paths/coverage.js';
import type { PathRun } from './suite.js';

declare module 'vitest' {
  interface TaskMeta {
    /** `toolCall: 14/14 states, 36/36 transitions (1424 runs)`, printed by `test/summaryReporter.ts`. */
    pathCoverage?: string;
  }
}

export class PathCoverage {
  private readonly map: CoverageMap;
  private readonly variants: Map<string, CoverageMap>;
  private readonly seen = new Set<string>();

  /**
   * `name`: the machine's name in `machineRegistry`. `variants`: altered copies of the machine,
   * checked against the same runs (to prove that a stage added without a path is reported).
   */
  constructor(
    readonly name: string,
    variants: Readonly<Record<string, AnyStateMachine>> = {},
    /** What the runs are played against (printed with the counts). */
    private readonly playedOn = 'the runtime',
  ) {
    const machine = machineRegistry[name];
    if (!machine) throw new Error(`no machine "${name}" in machineRegistry`);
    this.map = new CoverageMap({ [name]: machine });
    this.variants = new Map(Object.entries(variants).map(([label, m]) => [label, new CoverageMap({ [name]: m })]));
  }

  /** Adds what the run called `run` was observed to do (call before asserting its checks). */
  record(run: string, result: PathRun): void {
    this.seen.add(run);
    this.map.record(run, result.recorder);
    for (const v of this.variants.values()) v.record(run, result.recorder);
  }

  get runs(): number {
    return this.seen.size;
  }

  report(variant?: string): MachineCoverage[] {
    if (variant === undefined) return this.map.report();
    const v = this.variants.get(variant);
    if (!v) throw new Error(`no variant "${variant}"`);
    return v.report();
  }

  /**
   * Defines, at the point of the call (last in the file), the test that every state and every
   * transition of the machine was reached by the runs recorded before it. `expected`: the names of
   * the runs the file defines.
   */
  defineTest(expected: readonly string[]): void {
    const self = this;
    it(`reaches every state and takes every transition of ${this.name}`, ({ task }) => {
      const report = self.report();
      // Printed at the end of the run by `test/summaryReporter.ts`.
      task.meta.pathCoverage = `${formatCounts(report)} (${self.runs} runs against ${self.playedOn})`;
      const missing = expected.filter((n) => !self.seen.has(n));
      // A path that ran and threw (it cannot be played) is a failed path test, and counts for nothing here.
      expect(missing.length === expected.length ? ['no path test of this file ran before the coverage test'] : [], 'runs').toEqual([]);
      expect(uncovered(report)).toEqual([]);
    });
  }
}
