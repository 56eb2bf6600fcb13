/**
 * Model-based tests of the step machine: every planned path (see `step.model.ts`) played as the
 * first step of a real turn with a scripted model, asserting the transitions taken, the states,
 * the step's log events, the model requests made and the turn's outcome.
 */
import { describe, expect, it } from 'vitest';
import { planStepPaths } from './step.model.js';
import { runStepPath } from './step.scenario.js';
import { PathCoverage } from './pathCoverage.js';
import { expectChecks } from './suite.js';

const { paths, deadEnds } = planStepPaths();
const coverage = new PathCoverage('step');

describe('step paths', () => {
  it('every reachable state can still finish', () => expect(deadEnds).toEqual([]));

  it.each(paths.map((p) => [p.name, p] as const))('%s', async (name, path) => {
    const run = await runStepPath(path);
    coverage.record(name, run);
    expectChecks(run);
  });

  coverage.defineTest(paths.map((p) => p.name));
});
