/**
 * Plays a planned steering path on a running `steeringMachine` actor with a recording port (as the
 * turn lifecycle runs it: its child, sent `STEER`, `REQUEST`, `SUSPENDED`, `CLOSED`; its invoked
 * `followUp` sends `FOLLOWED_UP` by itself). Compares the microsteps and the states at rest with the
 * plan, and judges what the port was asked to do by the SPEC oracle.
 */
import { createActor, type AnyMachineSnapshot } from 'xstate';
import { steeringMachine } from '../../machines/steering.js';
import { catalogOf } from '../../src/testing/paths/catalog.js';
import { replay } from '../../src/testing/paths/modelScope.js';
import { Recorder, traceOf } from '../../src/testing/paths/observe.js';
import type { PlannedPath } from '../../src/testing/paths/planner.js';
import type { PathCheck, PathRun } from './suite.js';
import { recordingSteeringInput, type SteeringConfig } from './steering.model.js';
import { judgeSteering } from './steering.oracle.js';
import { quiesce } from './world.js';

const catalog = catalogOf(steeringMachine);

export async function runSteeringPath(path: PlannedPath<SteeringConfig>): Promise<PathRun> {
  const plan = replay(steeringMachine, recordingSteeringInput(), path.events);
  const effects: string[] = [];
  const recorder = new Recorder();
  const actor = createActor(steeringMachine, { input: recordingSteeringInput(effects), inspect: recorder.inspect }).start();
  const planned: unknown[] = [];
  const observed: unknown[] = [];
  for (const [i, event] of path.events.entries()) {
    // Sent by the invoked follow-up as it starts: it has happened already.
    if (event.type !== 'FOLLOWED_UP') actor.send(event as never);
    await quiesce();
    if (path.events[i + 1]?.type === 'FOLLOWED_UP') continue; // not at rest yet
    planned.push((plan.steps[i]!.snapshot as AnyMachineSnapshot).value);
    observed.push(actor.getSnapshot().value);
  }
  const spec = judgeSteering(path.events);
  const checks: PathCheck[] = [
    { what: 'steering state where it rests', planned, observed },
    {
      what: 'steering microsteps (transitions taken, state after each)',
      planned: traceOf([...plan.initial, ...plan.steps.flatMap((s) => s.microsteps)], (t) => catalog.transitionKeyOf(t)),
      observed: traceOf(recorder.of(steeringMachine)[0]?.microsteps ?? [], (t) => catalog.transitionKeyOf(t)),
    },
    { what: 'SPEC: the path is a possible history of steering', planned: [], observed: spec.problems },
    { what: 'SPEC: user/steer events and follow-up turns (§9.2, §9.4)', planned: spec.effects, observed: effects },
    { what: 'SPEC: no steer is lost', planned: [], observed: spec.lost },
  ];
  actor.stop();
  return { recorder, checks };
}
