/**
 * The step machine as a graph: the real `stepMachine` with scripted deps (log, retry policy,
 * compaction; its model stream and scheduler are created but never started), and an event
 * generator for what a streamed model response and its tools can do: text and reasoning deltas,
 * tool calls (at most two), a finish (natural, or cut off by the token limit), an error, the
 * caller's cancel, the backoff delay, and the scheduler finishing. The scheduler is created with
 * the first call; a step with no calls has none and goes from `awaitingTools` straight to `ending`.
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { getNextTransitions, type AnyEventObject, type AnyMachineSnapshot } from 'xstate';
import { stepMachine, type StepDeps, type StepInput } from '../../machines/step.js';
import type { LogPort } from '../../machines/commitGate.js';
import type { NewLogEvent } from '../../src/protocol/index.js';
import { enumerateConfigs, exploreGraph, planPaths, type Dimensions, type GraphModel, type Plan } from '../../src/testing/paths/planner.js';
import { scriptedSchedulerPipeline } from './scheduler.model.js';

export interface StepConfig {
  /** The retry policy's answer to a failed request (before or after tool calls arrived). */
  readonly decision: 'retry' | 'compact' | 'give-up';
  /** Whether compaction shrinks the prompt. */
  readonly shrinks: boolean;
  /** The step starts normally, or was cancelled before it started. */
  readonly start: 'fresh' | 'cancelled';
}

export const stepDims: Dimensions<StepConfig> = {
  decision: ['retry', 'compact', 'give-up'],
  shrinks: [true, false],
  start: ['fresh', 'cancelled'],
};

export const MAX_TOOL_CALLS = 2;

export const textDelta = { text: 'Reading. ', reasoning: 'Thinking. ' } as const;

/** The step's own log events as a path pins them down. */
export function describeStepLogEvent(e: NewLogEvent): string | undefined {
  switch (e.type) {
    case 'step/start':
      return e.type;
    case 'llm/stream':
      return `${e.type} ${e.kind} ${JSON.stringify(e.text)}`;
    case 'agent/request-error':
      return `${e.type} ${e.action}`;
    case 'step/end':
      return `${e.type} ${e.finishReason} calls=${e.toolCalls}`;
    default:
      return undefined;
  }
}

function recordingLog(recorded?: string[]): LogPort {
  let seq = 0;
  return {
    append(event) {
      const d = describeStepLogEvent(event);
      if (d && recorded) recorded.push(d);
      return { seq: ++seq };
    },
  };
}

export function scriptedStepDeps(config: StepConfig, recorded?: string[]): StepDeps {
  return {
    pipeline: scriptedSchedulerPipeline(),
    log: recordingLog(recorded),
    model: {} as LanguageModelV3, // never called: the model stream is never started in the graph
    tools: [],
    concurrency: 8,
    prompt: () => [],
    onRequestError: () => ({ kind: 'retryable', message: 'request failed', action: config.decision, ...(config.decision === 'retry' ? { delayMs: 1000 } : {}) }),
    compact: () => config.shrinks,
  };
}

export function stepInput(config: StepConfig, deps: StepDeps): StepInput {
  return { deps, turnId: 'turn-1', stepIndex: 0, ...(config.start === 'cancelled' ? { cancelled: true } : {}) };
}

interface StepCtx {
  toolCalls: number;
  finishReason: string;
  cancelled: boolean;
  attempt: number;
  buffer?: { kind: string };
}
const ctx = (s: AnyMachineSnapshot) => s.context as StepCtx;

function listens(s: AnyMachineSnapshot, type: string): boolean {
  return getNextTransitions(s).some((t) => t.eventType === type);
}

const schedulerDone = (s: AnyMachineSnapshot): AnyEventObject => ({
  type: 'xstate.done.actor.scheduler',
  actorId: 'scheduler',
  output: { results: [], cancelled: ctx(s).cancelled, maxRunning: 0 },
});

/** In `awaitingTools` with no calls (never at rest since the scheduler is created with the first call; kept as a guard). */
export function forcedStepEvent(s: AnyMachineSnapshot): AnyEventObject | undefined {
  return s.status === 'active' && s.matches('awaitingTools') && ctx(s).toolCalls === 0 ? schedulerDone(s) : undefined;
}

export function stepEvents(s: AnyMachineSnapshot): AnyEventObject[] {
  if (s.status !== 'active') return [];
  const forced = forcedStepEvent(s);
  if (forced) return [forced];
  const c = ctx(s);
  const events: AnyEventObject[] = [
    { type: 'MODEL.TEXT', kind: 'text', delta: textDelta.text },
    { type: 'MODEL.TEXT', kind: 'reasoning', delta: textDelta.reasoning },
    ...(c.toolCalls < MAX_TOOL_CALLS ? [{ type: 'MODEL.TOOL_CALL', callId: `s${c.toolCalls}`, toolName: 'work', input: '{}' }] : []),
    { type: 'MODEL.FINISH', finishReason: c.toolCalls > 0 ? 'tool-calls' : 'stop' },
    { type: 'MODEL.FINISH', finishReason: 'length' },
    { type: 'MODEL.ERROR', error: 'request failed' },
    { type: 'CANCEL', reason: 'user pressed stop' },
    ...getNextTransitions(s)
      .filter((t) => t.eventType.startsWith('xstate.after.'))
      .map((t) => ({ type: t.eventType })),
    ...(c.toolCalls > 0 ? [schedulerDone(s)] : []),
  ];
  return events.filter((e) => listens(s, e.type));
}

export function serializeStep(s: AnyMachineSnapshot): string {
  const c = ctx(s);
  // The finish reason tells a step that gave up from one that finished: without it their end states
  // are one state and shortest paths would never take the give-up branches.
  return `${JSON.stringify(s.value)} calls=${c.toolCalls} attempt=${Math.min(c.attempt, 2)}${c.cancelled ? ' cancelled' : ''} buffer=${c.buffer?.kind ?? '-'} finish=${c.finishReason}`;
}

export function describeStepEvent(e: AnyEventObject): string {
  if (e.type === 'MODEL.TEXT') return `TEXT(${e.kind})`;
  if (e.type === 'MODEL.TOOL_CALL') return 'TOOL_CALL';
  if (e.type === 'MODEL.FINISH') return `FINISH(${e.finishReason})`;
  if (e.type === 'MODEL.ERROR') return 'ERROR';
  if (e.type.startsWith('xstate.after.')) return `after ${e.type.split('.')[2]}`;
  if (e.type === 'xstate.done.actor.scheduler') return 'done(scheduler)';
  return e.type;
}

export const stepGraph: GraphModel<StepConfig> = {
  machine: stepMachine,
  input: (config) => stepInput(config, scriptedStepDeps(config)),
  events: (s) => stepEvents(s),
  serialize: serializeStep,
  describe: describeStepEvent,
};

let cached: Plan<StepConfig> | undefined;

/** Shortest paths of every class; simple paths of the classes where a failed request is retried. */
export function planStepPaths(): Plan<StepConfig> {
  cached ??= planPaths(stepGraph, enumerateConfigs(stepDims, (c) => exploreGraph(stepGraph, c)), {
    simplePathsFor: (c) => c.config.start === 'fresh' && c.config.decision !== 'give-up' && c.config.shrinks,
    simpleEvents: (e) => e.type !== 'MODEL.TEXT',
  });
  return cached;
}
