/**
 * Model-based tests of the scheduler machine: every planned path (see `scheduler.model.ts`) played
 * on a scheduler actor over the real runtime's pipeline, log and tools, asserting the transitions
 * taken, the states, the tool/call and tool/result events and the result codes in call order, and
 * judging them by SPEC (`scheduler.oracle.ts`). The last test checks that these runs covered the machine.
 */
import { describe, expect, it } from 'vitest';
import { planSchedulerPaths } from './scheduler.model.js';
import { judgeBatch } from './scheduler.oracle.js';
import { runSchedulerPath } from './scheduler.scenario.js';
import { PathCoverage } from './pathCoverage.js';
import { expectChecks } from './suite.js';
import { RUNTIME_RULES, SPEC_RULES } from './toolCall.oracle.js';

const { paths, deadEnds } = planSchedulerPaths();
const coverage = new PathCoverage('scheduler');

describe('scheduler paths', () => {
  it('every reachable state can still finish', () => expect(deadEnds).toEqual([]));

  it.each(paths.map((p) => [p.name, p] as const))('%s', async (name, path) => {
    const run = await runSchedulerPath(path);
    coverage.record(name, run);
    expectChecks(run);
  });

  // §8.12 + §8.14: the plan must still show an invalid call holding back a safe one while the model
  // streams, and `length` truncating both (the oracle judges them; this checks they are planned).
  it('plans an invalid call before a safe one: the safe call waits for the finish, or is truncated', () => {
    const names = paths.map((p) => p.name);
    const waits = paths.filter((p) => p.name.startsWith('[start=streaming] CALL.ADD(invalid) > CALL.ADD(safe) > INPUT.END(tool-calls)'));
    expect(waits.length).toBeGreaterThan(0);
    for (const p of waits) {
      const verdict = judgeBatch(p.config, p.events.slice(0, 2));
      expect(verdict.bodiesStarted).toEqual([]); // nothing started before the finish
    }
    expect(names).toContain('[start=streaming] CALL.ADD(invalid) > CALL.ADD(safe) > INPUT.END(length)');
    const cut = paths.find((p) => p.name === '[start=streaming] CALL.ADD(invalid) > CALL.ADD(safe) > INPUT.END(length)')!;
    expect(judgeBatch(cut.config, cut.events).codes).toEqual(['TRUNCATED_CALL', 'TRUNCATED_CALL']);
  });

  // Known deviation kept visible (see `OracleRules` in toolCall.oracle.ts): a call whose body
  // returns after the cancel keeps its value; by SPEC §3 it ends ABORTED. These pin that, judged by
  // SPEC: they fail when the machine follows SPEC. Then judge with SPEC_RULES and remove these.
  const deviating = paths
    .filter((p) => JSON.stringify(judgeBatch(p.config, p.events, SPEC_RULES).codes) !== JSON.stringify(judgeBatch(p.config, p.events, RUNTIME_RULES).codes))
    .sort((a, b) => a.events.length - b.events.length);
  it.each(deviating.slice(0, 2).map((p) => [p.name, p] as const))('known deviation from SPEC §3 (ABORTED), the value is kept: %s', async (_name, path) => {
    const run = await runSchedulerPath(path, SPEC_RULES);
    const codes = run.checks.find((c) => c.what === 'SPEC: result codes in call order')!;
    expect(codes.planned).toContain('ABORTED');
    expect(codes.observed).toEqual(judgeBatch(path.config, path.events, RUNTIME_RULES).codes);
  });

  coverage.defineTest(paths.map((p) => p.name));
});
