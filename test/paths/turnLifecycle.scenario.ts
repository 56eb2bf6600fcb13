/**
 * Plays a planned lifecycle path on a running `turnLifecycleMachine` actor with a recording port:
 * `BEGIN`, `DROP`, `CANCEL`, `STEER` are sent as the runtime's wiring sends them (turns.ts); room is
 * made or fails by settling the port's `makeRoom` promise; `PARKED`, `UNPARKED`, `QUIET`,
 * `TURN.ENDED`, `TURN.FAILED` come from the invoked `turn` run's report function, as the runtime's
 * run reports them. Its steering child runs too. Compares microsteps and states at rest with the
 * plan; judges what the port was asked to do and the outcome by the SPEC oracle.
 */
import { createActor, type AnyMachineSnapshot } from 'xstate';
import { turnLifecycleMachine } from '../../machines/turnLifecycle.js';
import { catalogOf } from '../../src/testing/paths/catalog.js';
import { replay } from '../../src/testing/paths/modelScope.js';
import { Recorder, traceOf } from '../../src/testing/paths/observe.js';
import type { PlannedPath } from '../../src/testing/paths/planner.js';
import type { PathCheck, PathRun } from './suite.js';
import { lifecycleInput, type LifecycleConfig, type LifecycleWorld } from './turnLifecycle.model.js';
import { judgeLifecycle } from './turnLifecycle.oracle.js';
import { quiesce } from './world.js';

const catalog = catalogOf(turnLifecycleMachine);

const outcomeOf = (s: AnyMachineSnapshot) => (s.matches('suspended') ? 'suspended' : s.matches('ended') ? (s.context as { outcome?: string }).outcome : undefined);

export async function runLifecyclePath(path: PlannedPath<LifecycleConfig>): Promise<PathRun> {
  const plan = replay(turnLifecycleMachine, lifecycleInput(path.config), path.events);
  const world: LifecycleWorld = { effects: [] };
  const recorder = new Recorder();
  const actor = createActor(turnLifecycleMachine, { input: lifecycleInput(path.config, world), inspect: recorder.inspect }).start();
  const planned: unknown[] = [];
  const observed: unknown[] = [];
  for (const [i, event] of path.events.entries()) {
    switch (event.type) {
      case 'xstate.done.actor.makeRoom':
        world.room!.resolve();
        break;
      case 'xstate.error.actor.makeRoom':
        world.room!.reject(event.error);
        break;
      case 'PARKED':
      case 'UNPARKED':
      case 'QUIET':
      case 'TURN.ENDED':
      case 'TURN.FAILED':
        if (!world.report) throw new Error(`no running turn to report ${event.type}`);
        world.report(event);
        break;
      default:
        actor.send(event as never);
    }
    await quiesce();
    planned.push((plan.steps[i]!.snapshot as AnyMachineSnapshot).value);
    observed.push(actor.getSnapshot().value);
  }
  const spec = judgeLifecycle(path.config, path.events);
  const checks: PathCheck[] = [
    { what: 'lifecycle state after each event', planned, observed },
    {
      what: 'lifecycle microsteps (transitions taken, state after each)',
      planned: traceOf([...plan.initial, ...plan.steps.flatMap((s) => s.microsteps)], (t) => catalog.transitionKeyOf(t)),
      observed: traceOf(recorder.of(turnLifecycleMachine)[0]?.microsteps ?? [], (t) => catalog.transitionKeyOf(t)),
    },
    { what: 'lifecycle outcome', planned: outcomeOf(plan.final), observed: outcomeOf(actor.getSnapshot()) },
    { what: 'SPEC: the path is a possible history of a turn', planned: [], observed: spec.problems },
    { what: 'SPEC: what the world is asked to do (§8.9, §8.16, §9.2–§9.4)', planned: spec.effects, observed: world.effects },
    { what: 'SPEC: how the turn ends', planned: spec.outcome, observed: outcomeOf(actor.getSnapshot()) },
  ];
  actor.stop();
  return { recorder, checks };
}
