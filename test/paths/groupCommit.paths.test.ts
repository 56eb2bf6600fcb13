/**
 * Model-based tests of group commit: every planned path (see `groupCommit.model.ts`) played on a
 * running actor, asserting the transitions taken, the states and, by the SPEC oracle, what the sink
 * does in the world (when a group is written, when it waits, what is durable, how it fails and
 * closes). The last test checks that these runs covered the machine.
 */
import { describe, expect, it } from 'vitest';
import { planGroupCommitPaths } from './groupCommit.model.js';
import { runGroupCommitPath } from './groupCommit.scenario.js';
import { PathCoverage } from './pathCoverage.js';
import { expectChecks } from './suite.js';

const { paths, deadEnds } = planGroupCommitPaths();
const coverage = new PathCoverage('groupCommit', {}, 'a running actor with a recording port');

describe('group commit paths', () => {
  it('every reachable state can still end', () => expect(deadEnds).toEqual([]));

  it.each(paths.map((p) => [p.name, p] as const))('%s', async (name, path) => {
    const run = await runGroupCommitPath(path);
    coverage.record(name, run);
    expectChecks(run);
  });

  coverage.defineTest(paths.map((p) => p.name));
});
