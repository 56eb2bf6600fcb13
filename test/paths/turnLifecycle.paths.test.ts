/**
 * Model-based tests of the turn lifecycle: every planned path (see `turnLifecycle.model.ts`) played
 * on a running actor, asserting the transitions taken, the states and, by the SPEC oracle, what the
 * world was asked to do (make room, run the turn, cancel it, log the suspension, deliver steers,
 * make follow-up turns) and how the turn ends. The last test checks that these runs covered the machine.
 */
import { describe, expect, it } from 'vitest';
import { PathCoverage } from './pathCoverage.js';
import { expectChecks } from './suite.js';
import { planLifecyclePaths } from './turnLifecycle.model.js';
import { runLifecyclePath } from './turnLifecycle.scenario.js';

const { paths, deadEnds } = planLifecyclePaths();
const coverage = new PathCoverage('turnLifecycle', {}, 'a running actor with a recording port');

describe('turn lifecycle paths', () => {
  it('every reachable state can still end', () => expect(deadEnds).toEqual([]));

  it.each(paths.map((p) => [p.name, p] as const))('%s', async (name, path) => {
    const run = await runLifecyclePath(path);
    coverage.record(name, run);
    expectChecks(run);
  });

  coverage.defineTest(paths.map((p) => p.name));
});
