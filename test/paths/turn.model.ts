/**
 * The turn machine as a graph: the real `turnMachine` with scripted deps (its step children are
 * created but never started; their done and error events are events of the graph), `maxSteps: 2`,
 * and an event generator for what a turn's caller and its steps can do: the turn starts (or is
 * cancelled before it starts), a step ends answered, with tool calls, failed, broken off after a
 * call arrived and retried (issue 12: the turn goes on with a new step) or, after a cancel,
 * cancelled, a step crashes, and the caller cancels while a step runs.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { getNextTransitions, type AnyEventObject, type AnyMachineSnapshot } from 'xstate';
import type { StepOutput } from '../../machines/step.js';
import { turnMachine, type TurnInput } from '../../machines/turn.js';
import type { LogPort } from '../../machines/commitGate.js';
import type { NewLogEvent } from '../../src/protocol/index.js';
import { enumerateConfigs, exploreGraph, planPaths, type Dimensions, type GraphModel, type Plan } from '../../src/testing/paths/planner.js';
import { scriptedSchedulerPipeline } from './scheduler.model.js';

/** The turn consults no port for its own decisions: one configuration. */
export type TurnConfig = Record<string, never>;
export const turnDims: Dimensions<TurnConfig> = {};

export const MAX_STEPS = 2;

/**
 * How a step ended, as the turn sees it. `broke-off`: the model's response broke off after a tool
 * call arrived and the retry policy would retry: the step kept the call and ended `error`, without
 * failing (issue 12).
 */
export type StepEnd = 'answered' | 'tool-calls' | 'broke-off' | 'failed' | 'cancelled';

export function stepOutput(end: StepEnd): StepOutput {
  return {
    toolCalls: end === 'tool-calls' || end === 'broke-off' ? 1 : 0,
    finishReason: end === 'failed' || end === 'broke-off' ? 'error' : end === 'cancelled' ? 'cancelled' : end === 'tool-calls' ? 'tool-calls' : 'stop',
    cancelled: end === 'cancelled',
    ...(end === 'failed' ? { error: 'model request failed (fatal): invalid api key' } : {}),
    results: [],
  };
}

export function describeTurnLogEvent(e: NewLogEvent): string | undefined {
  if (e.type === 'turn/start') return e.type;
  if (e.type === 'turn/end') return `${e.type} ${e.outcome} steps=${e.steps}`;
  return undefined;
}

export function turnInput(recorded?: string[]): TurnInput {
  let seq = 0;
  const log: LogPort = {
    append(event) {
      const d = describeTurnLogEvent(event);
      if (d && recorded) recorded.push(d);
      return { seq: ++seq };
    },
  };
  return {
    turnId: 'turn-1',
    input: 'go',
    maxSteps: MAX_STEPS,
    deps: {
      pipeline: scriptedSchedulerPipeline(),
      log,
      model: {} as LanguageModelV3,
      tools: [],
      concurrency: 8,
      prompt: () => [],
      onRequestError: () => ({ kind: 'fatal', message: 'x', action: 'give-up' }),
      compact: () => false,
    },
  };
}

interface TurnCtx {
  stepIndex: number;
  cancelled: boolean;
}
const ctx = (s: AnyMachineSnapshot) => s.context as TurnCtx;

export function turnEvents(s: AnyMachineSnapshot): AnyEventObject[] {
  if (s.status !== 'active') return [];
  const c = ctx(s);
  const stepDone = (end: StepEnd): AnyEventObject => ({ type: 'xstate.done.actor.step', actorId: 'step', output: stepOutput(end), end });
  const events: AnyEventObject[] = [
    // `rt.startTurn` sends START, or CANCEL instead when its signal is already aborted: only in `idle`.
    // Once cancelled, the running step ends by itself (the caller cannot get a second cancel in first).
    ...(s.matches('idle') ? [{ type: 'START' }, { type: 'CANCEL', reason: 'aborted' }] : c.cancelled ? [] : [{ type: 'CANCEL', reason: 'user pressed stop' }]),
    // A step ends cancelled exactly when it was told to; otherwise it answers, calls tools, breaks off
    // after a call (retried), fails or crashes.
    ...(c.cancelled
      ? [stepDone('cancelled')]
      : [stepDone('answered'), stepDone('tool-calls'), stepDone('broke-off'), stepDone('failed'), { type: 'xstate.error.actor.step', actorId: 'step', error: new Error('compactor crashed') }]),
  ];
  return events.filter((e) => getNextTransitions(s).some((t) => t.eventType === e.type));
}

export function serializeTurn(s: AnyMachineSnapshot): string {
  const c = ctx(s);
  return `${JSON.stringify(s.value)} step=${c.stepIndex}${c.cancelled ? ' cancelled' : ''}${s.status === 'done' ? ` ${(s.output as { outcome: string }).outcome}` : ''}`;
}

export function describeTurnEvent(e: AnyEventObject): string {
  if (e.type === 'xstate.done.actor.step') return `step done(${e.end})`;
  if (e.type === 'xstate.error.actor.step') return 'step crashed';
  return e.type;
}

export const turnGraph: GraphModel<TurnConfig> = {
  machine: turnMachine,
  input: () => turnInput(),
  events: (s) => turnEvents(s),
  serialize: serializeTurn,
  describe: describeTurnEvent,
};

let cached: Plan<TurnConfig> | undefined;

/** Shortest and simple paths of the turn (a small graph: every loop-free route is played). */
export function planTurnPaths(): Plan<TurnConfig> {
  cached ??= planPaths(turnGraph, enumerateConfigs(turnDims, (c) => exploreGraph(turnGraph, c)));
  return cached;
}
