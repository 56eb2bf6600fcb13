/**
 * Plays a planned step path against the real runtime: `rt.startTurn` with a scripted model whose
 * responses are built from the path (one stream part per `MODEL.*` event, each delayed on the fake
 * clock so the path decides when it arrives), a concurrency-safe tool whose bodies finish when the
 * path says the scheduler is done, a retry policy answered by the kind of error the model sends
 * (a 429 is retried, a context overflow compacted, anything else given up) and a compaction that
 * shrinks or not. The turn's first step is the step under test.
 *
 * A step that starts cancelled cannot be produced through `rt.startTurn` (a turn never spawns a
 * step after a cancel); that path runs on a step actor created directly with the runtime's
 * pipeline and log.
 */
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { z } from 'zod';
import { createActor, type AnyActorRef, type AnyEventObject, type AnyMachineSnapshot, type StateValue } from 'xstate';
import { stepMachine, type StepDeps } from '../../machines/step.js';
import { contextOverflowError, rateLimitError, scriptedModel, type ScriptedResponse } from '../../src/adapters/model/index.js';
import { createRuntime } from '../../src/runtime/createRuntime.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import { toFunctionTool } from '../../src/runtime/turns.js';
import { catalogOf } from '../../src/testing/paths/catalog.js';
import { replay, type Replay } from '../../src/testing/paths/modelScope.js';
import { Recorder, traceOf } from '../../src/testing/paths/observe.js';
import type { PlannedPath } from '../../src/testing/paths/planner.js';
import { describeStepLogEvent, forcedStepEvent, scriptedStepDeps, stepInput, type StepConfig } from './step.model.js';
import { judgeStep } from './step.oracle.js';
import { sessionRules, type PathCheck, type PathRun } from './suite.js';
import { fireNextTimer, ManualClock, Pending, quiesce, settleTurn } from './world.js';

const catalog = catalogOf(stepMachine);
const CHUNK_MS = 10;
/** A part that never arrives: keeps a stream open while the path cancels it. */
const NEVER_MS = 1e9;

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

function errorFor(decision: StepConfig['decision']): unknown {
  if (decision === 'retry') return rateLimitError();
  if (decision === 'compact') return contextOverflowError();
  return new Error('invalid api key');
}

function partFor(event: AnyEventObject, config: StepConfig): LanguageModelV3StreamPart {
  switch (event.type) {
    case 'MODEL.TEXT':
      return event.kind === 'text' ? { type: 'text-delta', id: 't', delta: event.delta } : { type: 'reasoning-delta', id: 'r', delta: event.delta };
    case 'MODEL.TOOL_CALL':
      return { type: 'tool-call', toolCallId: event.callId, toolName: event.toolName, input: event.input };
    case 'MODEL.FINISH':
      return { type: 'finish', finishReason: { unified: event.finishReason, raw: event.finishReason }, usage };
    default:
      return { type: 'error', error: errorFor(config.decision) };
  }
}

/** The model's responses, one per request the path makes: a new request each time the step (re-)enters `requesting`. */
export function responsesFor(plan: Replay, events: readonly AnyEventObject[], config: StepConfig): ScriptedResponse[] {
  const requests: LanguageModelV3StreamPart[][] = [];
  const entersRequesting = (microsteps: Replay['initial']) =>
    microsteps.some((m) => m.transitions.some((t) => t.source.id !== 'step.requesting' && (t.target ?? []).some((n) => n.id === 'step.requesting')));
  if (entersRequesting(plan.initial)) requests.push([]);
  events.forEach((event, i) => {
    if (event.type.startsWith('MODEL.')) requests.at(-1)!.push(partFor(event, config));
    if (entersRequesting(plan.steps[i]!.microsteps)) requests.push([]);
  });
  return requests.map((parts) => {
    const ended = parts.some((p) => p.type === 'finish' || p.type === 'error');
    const all = ended ? parts : [...parts, { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: 'never sent' }, usage }];
    return { parts: all, chunkDelayMs: (_p: LanguageModelV3StreamPart, index: number) => (ended || index < parts.length ? CHUNK_MS : NEVER_MS) };
  });
}

export async function runStepPath(path: PlannedPath<StepConfig>): Promise<PathRun> {
  const config = path.config;
  const recordedLog: string[] = [];
  const plan = replay(stepMachine, stepInput(config, scriptedStepDeps(config, recordedLog)), path.events);

  const clock = new ManualClock();
  const bodies = new Pending<string>();
  const work = defineTool({ name: 'work', input: z.object({}), isConcurrencySafe: () => true, execute: () => bodies.next() });
  const rt = createRuntime({
    clock,
    spillStore: false,
    tools: [work],
    compact: ({ log, turnId }) => {
      if (!config.shrinks) return false;
      log.append({ type: 'context/compacted', turnId, strategy: 'test', stubbedSeqs: [], beforeChars: 100, afterChars: 50 });
      return true;
    },
  });
  const recorder = new Recorder();
  const responses = responsesFor(plan, path.events, config);
  const model = scriptedModel([...responses, { text: 'All done.' }], { clock });
  const checks: PathCheck[] = [];

  let stepActor: () => AnyActorRef | undefined;
  let cancel: (reason?: string) => void;
  let turnDone: Promise<{ outcome: string }> | undefined;
  if (config.start === 'cancelled') {
    // Not reachable through rt.startTurn: see the file comment.
    const deps: StepDeps = {
      pipeline: rt.pipeline,
      log: rt.log,
      model,
      tools: [toFunctionTool(work)],
      concurrency: 8,
      prompt: () => [],
      onRequestError: () => ({ kind: 'fatal', message: 'unexpected', action: 'give-up' }),
      compact: () => false,
    };
    const actor = createActor(stepMachine, { input: { deps, turnId: 'turn-1', stepIndex: 0, cancelled: true }, clock, inspect: recorder.inspect });
    actor.start();
    stepActor = () => actor;
    cancel = (reason) => actor.send({ type: 'CANCEL', reason });
  } else {
    const turn = rt.startTurn({ model, input: 'go', inspect: recorder.inspect });
    stepActor = () => recorder.of(stepMachine)[0]?.ref;
    // The first cancel goes through the turn, as a user's does. A repeated one is absorbed by the
    // turn's lifecycle (already cancelling), so it is sent to the step itself: the step's own
    // CANCEL while cancelling (a repeat from the turn machine) stays covered.
    let cancelled = false;
    cancel = (reason) => {
      if (!cancelled) {
        cancelled = true;
        turn.cancel(reason);
      } else stepActor()?.send({ type: 'CANCEL', reason });
    };
    turnDone = turn.done;
  }
  await quiesce();

  // Compare states where the runtime rests: not right before a done event that comes by itself.
  const valueOf = (s: { status: string; value: StateValue }) => (s.status === 'done' ? 'done' : s.value);
  const atRest = (s: AnyMachineSnapshot) => forcedStepEvent(s) === undefined;
  const plannedValues: unknown[] = [];
  const observedValues: unknown[] = [];
  const compare = (planned: AnyMachineSnapshot) => {
    if (!atRest(planned)) return;
    plannedValues.push(valueOf(planned));
    const s = stepActor()?.getSnapshot();
    observedValues.push(s ? valueOf(s) : 'no step');
  };
  compare(plan.start);
  for (const [i, event] of path.events.entries()) {
    if (event.type.startsWith('MODEL.') || event.type.startsWith('xstate.after.')) await fireNextTimer(clock, event.type);
    else if (event.type === 'CANCEL') cancel(event.reason);
    else if (event.type === 'xstate.done.actor.scheduler') {
      // Finishing the tools finishes the scheduler; with no tools it finished by itself.
      while (bodies.size) bodies.take('a tool body').resolve('done');
    } else throw new Error(`no way to make the runtime produce ${event.type}`);
    await quiesce();
    compare(plan.steps[i]!.snapshot);
  }

  checks.push({ what: 'step state after each step (at rest)', planned: plannedValues, observed: observedValues });
  checks.push({
    what: 'step microsteps (transitions taken, state after each)',
    planned: traceOf([...plan.initial, ...plan.steps.flatMap((s) => s.microsteps)], (t) => catalog.transitionKeyOf(t)),
    observed: traceOf(recorder.of(stepMachine)[0]?.microsteps ?? [], (t) => catalog.transitionKeyOf(t)),
  });
  const stepEvents = rt.log.events().filter((e) => !('stepIndex' in e) || e.stepIndex === 0);
  checks.push(sessionRules(rt.log.events()));
  checks.push({ what: "log: the step's own events", planned: recordedLog, observed: stepEvents.flatMap((e) => describeStepLogEvent(e) ?? []) });
  checks.push({ what: 'model requests made by the step', planned: responses.length, observed: Math.min(model.calls.length, responses.length) });
  const spec = judgeStep(config, path.events);
  const described = stepEvents.flatMap((e) => describeStepLogEvent(e) ?? []);
  checks.push(
    { what: 'SPEC: the path is a possible history of the step', planned: [], observed: spec.problems },
    { what: 'SPEC: one agent/request-error per failed request (§8.13)', planned: spec.requestErrors, observed: described.filter((d) => d.startsWith('agent/request-error')).length },
    {
      what: "SPEC: each agent/request-error logs the policy's decision (§5; a broken-off response with calls: retry or give-up)",
      planned: spec.requestErrorActions.map((a) => `agent/request-error ${a}`),
      observed: described.filter((d) => d.startsWith('agent/request-error')),
    },
    { what: 'SPEC: step/start first, one step/end last (§8.13)', planned: ['step/start', spec.stepEnd], observed: [described[0], described.filter((d) => d.startsWith('step/')).at(-1)] },
    { what: 'SPEC: step/start and step/end once each', planned: 2, observed: described.filter((d) => d.startsWith('step/')).length },
  );
  if (spec.callResults) {
    checks.push({
      what: "SPEC: the step's calls keep their results (§3, §8.12; issue 12: also when the response broke off)",
      planned: spec.callResults,
      observed: stepEvents.flatMap((e) => (e.type === 'tool/result' ? [e.result.error?.code ?? 'ok'] : [])),
    });
  }
  if (turnDone) {
    const out = plan.final.output as { cancelled: boolean; error?: string } | undefined;
    const planned = out?.cancelled ? 'cancelled' : out?.error !== undefined ? 'failed' : 'completed';
    const outcome = await settleTurn(clock, turnDone);
    checks.push({ what: 'turn outcome', planned, observed: outcome });
    checks.push({ what: 'SPEC: turn outcome', planned: spec.turnOutcome, observed: outcome });
    // The turn's later steps (after tool calls) make one request each: the rest are this step's.
    const laterSteps = rt.log.events().filter((e) => e.type === 'step/start' && e.stepIndex > 0).length;
    checks.push({ what: 'SPEC: model requests made by the step (§5: retry only after a backoff or a reduction; none after calls arrived)', planned: spec.requests, observed: model.calls.length - laterSteps });
  }
  return { recorder, checks };
}
