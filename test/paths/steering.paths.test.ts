/**
 * Model-based tests of the steering machine: every planned path (see `steering.model.ts`) played on
 * a running actor, asserting the transitions taken, the states at rest and, by the SPEC oracle, the
 * `user/steer` events and follow-up turns. The last test checks that these runs covered the machine.
 */
import { describe, expect, it } from 'vitest';
import { PathCoverage } from './pathCoverage.js';
import { expectChecks } from './suite.js';
import { planSteeringPaths } from './steering.model.js';
import { runSteeringPath } from './steering.scenario.js';

const { paths, deadEnds } = planSteeringPaths();
const coverage = new PathCoverage('steering', {}, 'a running actor with a recording port');

describe('steering paths', () => {
  it('every reachable state can still end', () => expect(deadEnds).toEqual([]));

  it.each(paths.map((p) => [p.name, p] as const))('%s', async (name, path) => {
    const run = await runSteeringPath(path);
    coverage.record(name, run);
    expectChecks(run);
  });

  coverage.defineTest(paths.map((p) => p.name));
});
