/**
 * Plays a planned turn path against the real runtime: `rt.startTurn` (with an already aborted
 * signal when the path cancels before the start) on a scripted model whose response for each step
 * is chosen from how the path says that step ends: an answer, a tool call, a tool call followed by a
 * dropped connection (retryable: the step keeps the call and the turn goes on), a fatal error, a
 * context overflow whose compaction crashes (the step actor fails), or a stream that never finishes
 * (the path cancels it).
 */
import { z } from 'zod';
import type { AnyEventObject, AnyMachineSnapshot, StateValue } from 'xstate';
import { turnMachine } from '../../machines/turn.js';
import { contextOverflowError, scriptedModel, type ScriptedResponse } from '../../src/adapters/model/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { catalogOf } from '../../src/testing/paths/catalog.js';
import { replay, type Microstep } from '../../src/testing/paths/modelScope.js';
import { Recorder, traceOf } from '../../src/testing/paths/observe.js';
import type { PlannedPath } from '../../src/testing/paths/planner.js';
import { sessionRules, type PathCheck, type PathRun } from './suite.js';
import { describeTurnLogEvent, MAX_STEPS, turnInput, type StepEnd, type TurnConfig } from './turn.model.js';
import { judgeTurn } from './turn.oracle.js';
import { ManualClock, quiesce } from './world.js';

const catalog = catalogOf(turnMachine);

/** A connection that drops mid-response: a network reset, which the default retry policy retries. */
const connectionReset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

const spawnsStep = (microsteps: readonly Microstep[]) => microsteps.some((m) => m.transitions.some((t) => (t.target ?? []).some((n) => n.id === 'turn.stepping')));

/** What each spawned step's model request returns, read from how the path ends that step. */
function responsesFor(plannedSteps: ReadonlyArray<{ event: AnyEventObject; microsteps: readonly Microstep[] }>): ScriptedResponse[] {
  const responses: ScriptedResponse[] = [];
  let open = false;
  for (const { event, microsteps } of plannedSteps) {
    if (open) {
      if (event.type === 'CANCEL') responses.push({ text: 'never finished', chunkDelayMs: 1e9 });
      else if (event.type === 'xstate.error.actor.step') responses.push({ error: contextOverflowError() });
      else if (event.type === 'xstate.done.actor.step') {
        const end = event.end as StepEnd;
        if (end === 'answered') responses.push({ text: 'Answer.' });
        else if (end === 'tool-calls') responses.push({ toolCalls: [{ toolName: 'work', input: {} }] });
        else if (end === 'broke-off') responses.push({ toolCalls: [{ toolName: 'work', input: {} }], streamError: { error: connectionReset() } });
        else if (end === 'failed') responses.push({ error: new Error('invalid api key') });
      }
      open = false;
    }
    if (spawnsStep(microsteps)) open = true;
  }
  return responses;
}

export async function runTurnPath(path: PlannedPath<TurnConfig>): Promise<PathRun> {
  const recordedLog: string[] = [];
  const plan = replay(turnMachine, turnInput(recordedLog), path.events);
  const responses = responsesFor(plan.steps);

  const clock = new ManualClock();
  const rt = createRuntime({
    clock,
    spillStore: false,
    tools: [defineTool({ name: 'work', input: z.object({}), execute: () => 'worked' })],
    // Only consulted after a context overflow: the way to make a step actor fail.
    compact: () => {
      throw new Error('compactor crashed');
    },
  });
  const recorder = new Recorder();
  const model = scriptedModel(responses, { clock });
  const [first, ...rest] = path.events;
  const signal = first?.type === 'CANCEL' ? AbortSignal.abort('aborted') : undefined;
  const turn = rt.startTurn({ model, input: 'go', maxSteps: MAX_STEPS, inspect: recorder.inspect, ...(signal ? { signal } : {}) });
  await quiesce();

  // Steps end by themselves: compare the turn's state only where it waits for the caller.
  const valueOf = (s: { status: string; value: StateValue }) => (s.status === 'done' ? 'done' : s.value);
  const plannedValues: unknown[] = [];
  const observedValues: unknown[] = [];
  const compare = (planned: AnyMachineSnapshot, next: AnyEventObject | undefined) => {
    if (next && next.type !== 'CANCEL') return;
    plannedValues.push(valueOf(planned));
    observedValues.push(valueOf(turn.actor.getSnapshot()));
  };
  compare(plan.steps[0]?.snapshot ?? plan.start, rest[0]);
  for (const [i, event] of rest.entries()) {
    if (event.type === 'CANCEL') turn.cancel(event.reason);
    else if (event.type !== 'xstate.done.actor.step' && event.type !== 'xstate.error.actor.step') {
      throw new Error(`no way to make the runtime produce ${event.type}`);
    }
    await quiesce();
    compare(plan.steps[i + 1]!.snapshot, rest[i + 1]);
  }
  let outcome: string | undefined;
  void turn.done.then((o) => (outcome = o.outcome));
  await quiesce();

  const events = rt.log.events();
  const opened = events.filter((e) => e.type === 'step/start').length;
  const closed = events.filter((e) => e.type === 'step/end').length;
  const checks: PathCheck[] = [
    { what: 'turn state where it waits for the caller', planned: plannedValues, observed: observedValues },
    {
      what: 'turn microsteps (transitions taken, state after each)',
      planned: traceOf([...plan.initial, ...plan.steps.flatMap((s) => s.microsteps)], (t) => catalog.transitionKeyOf(t)),
      observed: traceOf(recorder.of(turnMachine)[0]?.microsteps ?? [], (t) => catalog.transitionKeyOf(t)),
    },
    { what: 'log: turn/start … turn/end', planned: recordedLog, observed: events.flatMap((e) => describeTurnLogEvent(e) ?? []) },
    { what: 'turn outcome', planned: (plan.final.output as { outcome: string } | undefined)?.outcome, observed: outcome },
    { what: 'model requests', planned: responses.length, observed: model.calls.length },
    { what: 'every step opened is closed (SPEC §8.13)', planned: opened, observed: closed },
  ];
  const spec = judgeTurn(path.events, MAX_STEPS);
  checks.push(
    { what: 'SPEC: the path is a possible history of the turn', planned: [], observed: spec.problems },
    { what: 'SPEC: turn outcome', planned: spec.outcome, observed: outcome },
    { what: 'SPEC: turn/start … turn/end', planned: spec.log, observed: events.flatMap((e) => describeTurnLogEvent(e) ?? []) },
    { what: 'SPEC: steps opened, one model request each (§8.13)', planned: [spec.steps, spec.steps], observed: [opened, model.calls.length] },
    sessionRules(events),
  );
  return { recorder, checks };
}
