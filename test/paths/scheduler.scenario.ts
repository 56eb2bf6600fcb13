/**
 * Plays a planned scheduler path against the real runtime's pipeline and log: the scheduler actor
 * is created directly (as the step does, and as `test/machines/scheduler.property.test.ts` does)
 * with `rt.pipeline` and `rt.log`, and observed with `inspect`. Calls go to two real tools
 * (`safe`, concurrency-safe; `exclusive`), whose bodies finish when the path says their call is done.
 */
import { z } from 'zod';
import { createActor, toPromise, type AnyEventObject, type AnyMachineSnapshot, type StateValue } from 'xstate';
import type { CallStages } from '../../machines/callStages.js';
import { schedulerMachine, type SchedulerContext } from '../../machines/scheduler.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { catalogOf } from '../../src/testing/paths/catalog.js';
import { replay } from '../../src/testing/paths/modelScope.js';
import { Recorder, traceOf } from '../../src/testing/paths/observe.js';
import type { PlannedPath } from '../../src/testing/paths/planner.js';
import {
  describeSchedulerLogEvent,
  finishedChildren,
  schedulerInput,
  scriptedLog,
  scriptedSchedulerPipeline,
  type SchedulerConfig,
} from './scheduler.model.js';
import { judgeBatch } from './scheduler.oracle.js';
import { sessionRules, type PathCheck, type PathRun } from './suite.js';
import { SPEC_RULES, type OracleRules } from './toolCall.oracle.js';
import { deferred, ManualClock, quiesce, type Deferred } from './world.js';

const catalog = catalogOf(schedulerMachine);

/** Plays `path`; checks it against the machine's replay and against SPEC (`scheduler.oracle.ts`, judged with `rules`). */
export async function runSchedulerPath(path: PlannedPath<SchedulerConfig>, rules: OracleRules = SPEC_RULES): Promise<PathRun> {
  const recordedLog: string[] = [];
  const plan = replay(schedulerMachine, schedulerInput(path.config, scriptedSchedulerPipeline(), scriptedLog(recordedLog)), path.events);

  const clock = new ManualClock();
  const bodies = new Map<string, Deferred<string>>();
  const started: string[] = [];
  const body = (callId: string) => {
    started.push(callId);
    const d = deferred<string>();
    bodies.set(callId, d);
    return d.promise;
  };
  const input = z.object({ n: z.number() });
  const rt = createRuntime({
    clock,
    spillStore: false,
    tools: [
      defineTool({ name: 'safe', input, isConcurrencySafe: () => true, execute: (_a, exec) => body(exec.callId) }),
      defineTool({ name: 'exclusive', input, execute: (_a, exec) => body(exec.callId) }),
    ],
  });
  const recorder = new Recorder();
  // The runtime's pipeline, with one fault for the paths that crash a call: the port throws once,
  // the first time it finalizes that call, which is the call actor finalizing its body's outcome
  // (a value, or ABORTED after a cancel), so the actor fails (only a broken port can do that). The
  // scheduler's own finalize of the TOOL_FAILED it then gives the call comes second and succeeds.
  const crashing = new Set<string>();
  const port: CallStages = {
    ...rt.pipeline,
    finalize: (request, call, settlement, marks) => {
      if (crashing.delete(request.callId)) throw new Error('port exploded');
      return rt.pipeline.finalize(request, call, settlement, marks);
    },
  };
  const actor = createActor(schedulerMachine, { input: schedulerInput(path.config, port, rt.log), clock, inspect: recorder.inspect });
  const output = toPromise(actor);
  actor.start();
  await quiesce();

  const valueOf = (s: { status: string; value: StateValue }) => (s.status === 'done' ? 'done' : s.value);
  // A done event of a child that was final when spawned arrives by itself, within the same send:
  // compare states only where the runtime is at rest (not right before such an event).
  const before = [plan.start, ...plan.steps.map((s) => s.snapshot)];
  const atRest = (s: AnyMachineSnapshot) => finishedChildren(s).length === 0;
  const plannedValues: unknown[] = [];
  const observedValues: unknown[] = [];
  if (atRest(plan.start)) {
    plannedValues.push(valueOf(plan.start));
    observedValues.push(valueOf(actor.getSnapshot()));
  }
  for (const [i, event] of path.events.entries()) {
    await produce(event, before[i]!);
    const planned = plan.steps[i]!.snapshot;
    if (atRest(planned)) {
      plannedValues.push(valueOf(planned));
      observedValues.push(valueOf(actor.getSnapshot()));
    }
  }

  async function produce(event: AnyEventObject, from: AnyMachineSnapshot): Promise<void> {
    if (event.type.startsWith('xstate.done.actor.') || event.type.startsWith('xstate.error.actor.')) {
      if (finishedChildren(from).some((e) => e.type === event.type)) return; // it already arrived
      const index = Number(event.actorId.slice('call-'.length));
      const callId = (from.context as SchedulerContext).gate.entries[index]!.request.callId;
      const d = bodies.get(callId);
      if (!d) throw new Error(`the path finishes call ${index} (${callId}), but its body never started`);
      bodies.delete(callId);
      if (event.type.startsWith('xstate.error.actor.')) crashing.add(callId);
      d.resolve('done');
    } else if (event.type === 'CALL.ADD' || event.type === 'INPUT.END' || event.type === 'CANCEL') {
      const { kind: _kind, ...sent } = event;
      actor.send(sent as never);
    } else {
      throw new Error(`no way to make the runtime produce ${event.type}`);
    }
    await quiesce();
  }

  const checks: PathCheck[] = [
    { what: 'scheduler state after each step (at rest)', planned: plannedValues, observed: observedValues },
    {
      what: 'scheduler microsteps (transitions taken, state after each)',
      planned: traceOf([...plan.initial, ...plan.steps.flatMap((s) => s.microsteps)], (t) => catalog.transitionKeyOf(t)),
      observed: traceOf(recorder.of(schedulerMachine)[0]?.microsteps ?? [], (t) => catalog.transitionKeyOf(t)),
    },
    {
      what: 'log: tool/call and tool/result events',
      planned: recordedLog,
      observed: rt.log.events().flatMap((e) => describeSchedulerLogEvent(e) ?? []),
    },
  ];
  const out = actor.getSnapshot().status === 'done' ? await output : undefined;
  checks.push({
    what: 'output: result codes in call order',
    planned: (plan.final.output as { results: Array<{ error?: { code: string } }> } | undefined)?.results.map((r) => r.error?.code ?? 'ok'),
    observed: out?.results.map((r) => r.error?.code ?? 'ok'),
  });
  const spec = judgeBatch(path.config, path.events, rules);
  checks.push(
    { what: 'SPEC: the path is a possible history of the batch', planned: [], observed: spec.problems },
    { what: 'SPEC: tool/call and tool/result events (array order, streamed commit)', planned: spec.log, observed: rt.log.events().flatMap((e) => describeSchedulerLogEvent(e) ?? []) },
    { what: 'SPEC: tool bodies started, in order', planned: spec.bodiesStarted, observed: started },
    { what: 'SPEC: the batch is complete', planned: spec.finished, observed: actor.getSnapshot().status === 'done' },
    { what: 'SPEC: result codes in call order', planned: spec.codes, observed: out?.results.map((r) => r.error?.code ?? 'ok') },
    sessionRules(rt.log.events()),
  );
  return { recorder, checks };
}
