/**
 * Model-based tests of the turn machine: every planned path (see `turn.model.ts`) played through
 * `rt.startTurn` with a scripted model, asserting the transitions taken, the states, turn/start
 * and turn/end, the outcome and the model requests made.
 */
import { describe, expect, it } from 'vitest';
import { expectChecks, knownBugChecks } from './suite.js';
import { planTurnPaths } from './turn.model.js';
import { runTurnPath } from './turn.scenario.js';

const { paths, deadEnds } = planTurnPaths();

describe('turn paths', () => {
  it('every reachable state can still finish', () => expect(deadEnds).toEqual([]));

  it.each(paths.map((p) => [p.name, p] as const))('%s', async (_name, path) => {
    expectChecks(await runTurnPath(path));
  });

  // Kept visible until fixed: this test starts failing (and should be removed) once turn.ts closes a crashed step.
  it.fails('known bug: a step that crashes is never closed (no step/end before turn/end, SPEC §8.13)', async () => {
    const crashed = paths.filter((p) => p.events.some((e) => e.type === 'xstate.error.actor.step'));
    expect(crashed.length).toBeGreaterThan(0);
    for (const path of crashed) for (const c of knownBugChecks(await runTurnPath(path))) expect(c.observed, `${path.name}: ${c.what}`).toEqual(c.planned);
  });
});
