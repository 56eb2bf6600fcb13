/**
 * Plays a planned group-commit path on a running `groupCommitMachine` actor with a recording port:
 * the sink's asks are sent as the sinks send them; a scheduled commit becomes due by calling the
 * wait's callback; a group becomes durable (or its write fails) by settling the port's `commit`
 * promise. Compares microsteps and states at rest with the plan; judges what the port was asked to
 * do by the SPEC oracle.
 */
import { createActor, type AnyMachineSnapshot } from 'xstate';
import { groupCommitMachine } from '../../machines/groupCommit.js';
import { catalogOf } from '../../src/testing/paths/catalog.js';
import { recordingPort, type GroupCommitConfig, type GroupCommitWorld } from './groupCommit.model.js';
import { judgeGroupCommit } from './groupCommit.oracle.js';
import { replay } from '../../src/testing/paths/modelScope.js';
import { Recorder, traceOf } from '../../src/testing/paths/observe.js';
import type { PlannedPath } from '../../src/testing/paths/planner.js';
import type { PathCheck, PathRun } from './suite.js';
import { quiesce } from './world.js';

const catalog = catalogOf(groupCommitMachine);

const endOf = (s: AnyMachineSnapshot) => (s.matches('failed') ? 'failed' : s.matches('closed') ? 'closed' : JSON.stringify(s.value));

export async function runGroupCommitPath(path: PlannedPath<GroupCommitConfig>): Promise<PathRun> {
  const plan = replay(groupCommitMachine, { port: recordingPort() }, path.events);
  const world: GroupCommitWorld = { effects: [] };
  const recorder = new Recorder();
  const actor = createActor(groupCommitMachine, { input: { port: recordingPort(world) }, inspect: recorder.inspect }).start();
  const planned: unknown[] = [];
  const observed: unknown[] = [];
  for (const [i, event] of path.events.entries()) {
    switch (event.type) {
      case 'DUE':
        if (!world.due) throw new Error('no scheduled commit to make due');
        world.due();
        break;
      case 'xstate.done.actor.commit':
        world.write!.resolve(event.output as number);
        break;
      case 'xstate.error.actor.commit':
        world.write!.reject(event.error);
        break;
      default:
        actor.send(event as never);
    }
    await quiesce();
    planned.push((plan.steps[i]!.snapshot as AnyMachineSnapshot).value);
    observed.push(actor.getSnapshot().value);
  }
  const spec = judgeGroupCommit(path.events);
  const checks: PathCheck[] = [
    { what: 'group commit state after each event', planned, observed },
    {
      what: 'group commit microsteps (transitions taken, state after each)',
      planned: traceOf([...plan.initial, ...plan.steps.flatMap((s) => s.microsteps)], (t) => catalog.transitionKeyOf(t)),
      observed: traceOf(recorder.of(groupCommitMachine)[0]?.microsteps ?? [], (t) => catalog.transitionKeyOf(t)),
    },
    { what: 'SPEC: the path is a possible history of a sink', planned: [], observed: spec.problems },
    { what: 'SPEC: what the sink does in the world (writes, waits, durability, failure)', planned: spec.effects, observed: world.effects },
    { what: 'SPEC: how the sink ends', planned: spec.end, observed: endOf(actor.getSnapshot()) },
  ];
  actor.stop();
  return { recorder, checks };
}
