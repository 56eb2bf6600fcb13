/**
 * Model-based tests of the scheduler machine: every planned path (see `scheduler.model.ts`) played
 * on a scheduler actor over the real runtime's pipeline, log and tools, asserting the transitions
 * taken, the states, the tool/call and tool/result events and the result codes in call order.
 */
import { describe, expect, it } from 'vitest';
import { planSchedulerPaths } from './scheduler.model.js';
import { runSchedulerPath } from './scheduler.scenario.js';
import { PathCoverage } from './pathCoverage.js';
import { expectChecks } from './suite.js';

const { paths, deadEnds } = planSchedulerPaths();
const coverage = new PathCoverage('scheduler');

describe('scheduler paths', () => {
  it('every reachable state can still finish', () => expect(deadEnds).toEqual([]));

  it.each(paths.map((p) => [p.name, p] as const))('%s', async (name, path) => {
    const run = await runSchedulerPath(path);
    coverage.record(name, run);
    expectChecks(run);
  });

  coverage.defineTest(paths.map((p) => p.name));
});
