/**
 * Model-based tests of the step machine: every planned path (see `step.model.ts`) played as the
 * first step of a real turn with a scripted model, asserting the transitions taken, the states,
 * the step's log events, the model requests made and the turn's outcome.
 */
import { describe, expect, it } from 'vitest';
import { planStepPaths } from './step.model.js';
import { runStepPath } from './step.scenario.js';
import { expectChecks } from './suite.js';

const { paths, deadEnds } = planStepPaths();

describe('step paths', () => {
  it('every reachable state can still finish', () => expect(deadEnds).toEqual([]));

  it.each(paths.map((p) => [p.name, p] as const))('%s', async (_name, path) => {
    expectChecks(await runStepPath(path));
  });
});
