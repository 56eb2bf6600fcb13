/**
 * Model-based tests of the turn machine: every planned path (see `turn.model.ts`) played through
 * `rt.startTurn` with a scripted model, asserting the transitions taken, the states, turn/start
 * and turn/end, the outcome and the model requests made. The last test checks that these runs
 * covered the machine.
 */
import { describe, expect, it } from 'vitest';
import { PathCoverage } from './pathCoverage.js';
import { expectChecks } from './suite.js';
import { planTurnPaths } from './turn.model.js';
import { runTurnPath } from './turn.scenario.js';

const { paths, deadEnds } = planTurnPaths();
const coverage = new PathCoverage('turn');

describe('turn paths', () => {
  it('every reachable state can still finish', () => expect(deadEnds).toEqual([]));

  it.each(paths.map((p) => [p.name, p] as const))('%s', async (name, path) => {
    const run = await runTurnPath(path);
    coverage.record(name, run);
    expectChecks(run);
  });

  coverage.defineTest(paths.map((p) => p.name));
});
