/**
 * The coverage checker itself, on a small ad-hoc machine with every kind of transition the real
 * machines use (guarded events and their fallback, `always`, `after`, invoke done/error): it lists
 * exactly what the observed runs did not reach, and a state added to a copy of the machine without
 * a run is reported by name.
 */
import { createActor, createMachine, fromPromise, setup, type AnyStateMachine } from 'xstate';
import { describe, expect, it } from 'vitest';
import { catalogOf } from '../../src/testing/paths/catalog.js';
import { CoverageMap, formatCounts, uncovered } from '../../src/testing/paths/coverage.js';
import { Recorder } from '../../src/testing/paths/observe.js';
import { ManualClock, quiesce } from './world.js';

const adHoc = setup({
  types: {
    context: {} as { ok: boolean },
    input: {} as { ok: boolean },
    events: {} as { type: 'GO' } | { type: 'NEVER' },
  },
  actors: {
    load: fromPromise(async ({ input }: { input: { ok: boolean } }) => {
      if (!input.ok) throw new Error('not ok');
      return 1;
    }),
  },
  guards: { isOk: ({ context }) => context.ok },
  delays: { patience: 100 },
}).createMachine({
  id: 'adHoc',
  context: ({ input }) => ({ ok: input.ok }),
  initial: 'idle',
  states: {
    idle: { on: { GO: [{ guard: 'isOk', target: 'loading' }, { target: 'waiting' }], NEVER: 'unreached' } },
    waiting: { after: { patience: 'idle' } },
    loading: { invoke: { src: 'load', input: ({ context }) => ({ ok: context.ok }), onDone: 'checking', onError: 'failed' } },
    checking: { always: [{ guard: 'isOk', target: 'done' }, { target: 'failed' }] },
    failed: { type: 'final' },
    done: { type: 'final' },
    unreached: {},
  },
});

/** Two runs: one that loads, one that waits and times out back to idle. */
async function observedRuns(): Promise<Array<[string, Recorder]>> {
  const runs: Array<[string, Recorder]> = [];
  for (const ok of [true, false]) {
    const clock = new ManualClock();
    const recorder = new Recorder();
    const actor = createActor(adHoc, { input: { ok }, clock, inspect: recorder.inspect }).start();
    actor.send({ type: 'GO' });
    await quiesce();
    await clock.advance(100);
    actor.stop();
    runs.push([ok ? 'loads' : 'waits', recorder]);
  }
  return runs;
}

function coverageOf(machine: AnyStateMachine, runs: Array<[string, Recorder]>) {
  const map = new CoverageMap({ adHoc: machine });
  for (const [name, recorder] of runs) map.record(name, recorder);
  return map.report();
}

describe('the coverage checker', () => {
  it('reads every kind of transition from the machine, with guards and targets', () => {
    expect(catalogOf(adHoc).transitions.map((t) => `${t.kind} ${t.label}`)).toEqual([
      'event idle: GO [isOk] → loading',
      'event idle: GO [else] → waiting',
      'event idle: NEVER → unreached',
      'after waiting: after patience → idle',
      'child-done loading: done load → checking',
      'child-error loading: error load → failed',
      'always checking: always [isOk] → done',
      'always checking: always [else] → failed',
    ]);
  });

  it('lists exactly the states and transitions the observed runs did not reach', async () => {
    const report = coverageOf(adHoc, await observedRuns());
    expect(formatCounts(report)).toBe('adHoc: 5/7 states, 5/8 transitions');
    expect(uncovered(report)).toEqual([
      'adHoc: state adHoc.failed is not reached by any path',
      'adHoc: state adHoc.unreached is not reached by any path',
      'adHoc: transition idle: NEVER → unreached is not taken by any path',
      'adHoc: transition loading: error load → failed is not taken by any path',
      'adHoc: transition checking: always [else] → failed is not taken by any path',
    ]);
    // Each item names the runs that reached it.
    expect(report[0]!.transitions.find((t) => t.label === 'waiting: after patience → idle')!.paths).toEqual(['waits']);
  });

  it('a state added to a copy of the machine, without a run that reaches it, is reported by name', async () => {
    const config = adHoc.config as { states: Record<string, { on?: Record<string, unknown> }> };
    const withArchive = createMachine(
      {
        ...(adHoc.config as object),
        states: { ...config.states, idle: { ...config.states.idle, on: { ...config.states.idle!.on, ARCHIVE: 'archived' } }, archived: {} },
      } as never,
      adHoc.implementations as never,
    );
    const before = uncovered(coverageOf(adHoc, await observedRuns()));
    const after = uncovered(coverageOf(withArchive, await observedRuns()));
    // Runs of the original still count for the copy (matched by machine id and position) …
    expect(formatCounts(coverageOf(withArchive, await observedRuns()))).toBe('adHoc: 5/8 states, 5/9 transitions');
    // … and exactly the new state and its transition are added to what is missing.
    expect(after.filter((line) => !before.includes(line))).toEqual([
      'adHoc: state adHoc.archived is not reached by any path',
      'adHoc: transition idle: ARCHIVE → archived is not taken by any path',
    ]);
  });
});
