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

  // SPEC §3/§8.9: a body that returns after the cancel settles its call ABORTED (the model's done
  // event carries ABORTED, the oracle plans it); a call actor may still crash after the cancel
  // (`cancelling: error *`), and gets TOOL_FAILED. Both must stay planned.
  it('plans a call that finishes after the cancel (ABORTED) and one that crashes after it (TOOL_FAILED)', () => {
    const name = '[start=batch] CANCEL > done(call-0) > done(call-1)';
    const late = paths.find((p) => p.name === name);
    expect(late, name).toBeDefined();
    expect(judgeBatch(late!.config, late!.events).codes).toEqual(['ABORTED', 'ABORTED', 'ABORTED_BEFORE_DISPATCH']);
    expect(late!.events.filter((e) => e.type.startsWith('xstate.done.actor.')).map((e) => e.output.error?.code)).toEqual(['ABORTED', 'ABORTED']);
    const crashed = paths.filter((p) => /CANCEL > (.* > )?crashed\(call-\d\)/.test(p.name));
    expect(crashed.length).toBeGreaterThan(0);
    for (const p of crashed) expect(judgeBatch(p.config, p.events).codes).toContain('TOOL_FAILED');
  });

  coverage.defineTest(paths.map((p) => p.name));
});
