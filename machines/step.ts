/**
 * One step: `step/start` → one model request, streamed → its tool calls handed to the scheduler as
 * they arrive (streaming dispatch: safe calls may start before the model finishes) → `step/end`.
 * A failed request is classified by the injected policy: retry after a backoff, compact the context
 * and retry only if the prompt shrank, or give up. Every opened step is closed, whatever happens.
 */
import type { LanguageModelV3, LanguageModelV3FunctionTool, LanguageModelV3Prompt } from '@ai-sdk/provider';
import { assertEvent, assign, enqueueActions, setup } from 'xstate';
import type { RequestErrorKind, TokenUsage, ToolCallRequest } from '../src/protocol/index.js';
import type { CallStages } from './callStages.js';
import type { LogPort } from './commitGate.js';
import type { ModelCallOptions } from './modelCallOptions.js';
import { logModelWarnings, logReasoningEnd, stepUsageAfter } from './modelReport.js';
import { modelStreamLogic, type ModelStreamEvent } from './modelStream.js';
import { schedulerMachine, type SchedulerOutput } from './scheduler.js';
import type { ReadyToolCall } from './toolInputTracker.js';

/** What the retry policy decided about one failed model request. */
export interface RequestErrorDecision {
  readonly kind: RequestErrorKind;
  readonly status?: number;
  readonly message: string;
  readonly action: 'retry' | 'compact' | 'give-up';
  readonly delayMs?: number;
}

/**
 * The most model requests one step makes, whatever its retry policy says (SPEC §5: no retry loop).
 * A policy may ask for fewer (`StepDeps.maxAttempts`), never for more.
 */
export const MAX_REQUEST_ATTEMPTS = 16;

/**
 * The step's own bounds on a policy's decision, applied before it is logged and acted on: no
 * request beyond the cap (`give-up` once `attempt` reaches it); a context overflow is never retried
 * in place (a `retry` becomes `compact`: the retry then follows a logged reduction or does not
 * happen); any other retry waits the logged backoff `delayMs` (made a finite, non-negative number).
 */
export function boundDecision(decision: RequestErrorDecision, attempt: number, maxAttempts: number): RequestErrorDecision {
  if (decision.action === 'give-up') return decision;
  if (attempt >= maxAttempts) {
    const { delayMs: _unused, ...rest } = decision;
    return { ...rest, action: 'give-up', message: `${decision.message} (the step's cap of ${maxAttempts} request(s) is reached)` };
  }
  if (decision.kind === 'context-overflow') {
    const { delayMs: _unused, ...rest } = decision;
    return { ...rest, action: 'compact' };
  }
  if (decision.action === 'retry') {
    const d = decision.delayMs;
    // (`Number.isFinite` is false for undefined and NaN)
    return { ...decision, delayMs: Number.isFinite(d) ? Math.max(0, d as number) : 0 };
  }
  return decision;
}

/** The cap a step applies: the policy's `maxAttempts` when it is lower than `MAX_REQUEST_ATTEMPTS`. */
export function requestAttemptCap(maxAttempts: number | undefined): number {
  if (maxAttempts === undefined || Number.isNaN(maxAttempts)) return MAX_REQUEST_ATTEMPTS;
  return Math.max(1, Math.min(MAX_REQUEST_ATTEMPTS, Math.floor(maxAttempts)));
}

/** Everything a step needs from the world, injected. */
export interface StepDeps {
  readonly pipeline: CallStages;
  readonly log: LogPort;
  readonly model: LanguageModelV3;
  readonly tools: readonly LanguageModelV3FunctionTool[];
  readonly concurrency: number;
  /** The prompt for the next request: always a projection of the log. */
  prompt(): LanguageModelV3Prompt;
  /** Classifies a failed request and applies the retry policy (the step then bounds the answer: `boundDecision`). */
  onRequestError(error: unknown, attempt: number, compactions: number): RequestErrorDecision;
  /** The policy's bound on requests per step; the step never exceeds `MAX_REQUEST_ATTEMPTS` either way. */
  readonly maxAttempts?: number;
  /** Compacts the model's view (logging `context/compacted`); true only if the prompt shrank. */
  compact(): boolean;
  /** Longest run of streamed text held before an `llm/stream` event is written (default 8192 chars). */
  readonly coalesceChars?: number;
  /** Passed to every request: output-token limit, sampling, tool choice, provider options, headers. */
  readonly callOptions?: ModelCallOptions;
  /** Told every streamed text or reasoning delta as the step receives it (for UIs; the log gets them coalesced). */
  readonly onText?: (stepIndex: number, kind: 'text' | 'reasoning', delta: string) => void;
}

/** One step of a turn: its services (`deps`) and where it is. */
export interface StepInput {
  readonly deps: StepDeps;
  readonly turnId: string;
  readonly stepIndex: number;
  /** The turn was already cancelled when this step was to start. */
  readonly cancelled?: boolean;
}

/** How a step ended: its calls' results, the model's finish reason, and whether it was cancelled or failed. */
export interface StepOutput {
  readonly toolCalls: number;
  readonly finishReason: string;
  readonly cancelled: boolean;
  readonly error?: string;
  readonly results: SchedulerOutput['results'];
}

/** The step machine's context: its attempt, its streamed text not yet logged, its calls and its outcome so far. */
export interface StepContext {
  readonly deps: StepDeps;
  readonly turnId: string;
  readonly stepIndex: number;
  readonly attempt: number;
  readonly compactions: number;
  /** Streamed text not yet logged (coalesced into one `llm/stream` event per contiguous run). */
  readonly buffer: { kind: 'text' | 'reasoning'; text: string } | undefined;
  readonly toolCalls: number;
  readonly finishReason: string;
  readonly cancelled: boolean;
  readonly error: string | undefined;
  readonly decision: RequestErrorDecision | undefined;
  readonly results: SchedulerOutput['results'];
  /** Tokens reported by this step's requests so far. */
  readonly usage?: TokenUsage;
  /** The response broke off after some calls arrived (retryable): calls not started get this reason. */
  readonly droppedMidResponse?: string;
}

/** What the step hears: the model stream, a cancel, its scheduler finishing. */
export type StepEvent = ModelStreamEvent | { type: 'CANCEL'; reason?: string } | { type: 'xstate.done.actor.scheduler'; output: SchedulerOutput };

/** The scheduler's request for a call the model stream reported. */
const requestOf = (c: ReadyToolCall): ToolCallRequest => ({ callId: c.callId, toolName: c.toolName, input: c.input });

const flushBuffer = enqueueActions(({ context, enqueue }: { context: StepContext; enqueue: { assign: (a: Partial<StepContext>) => void } }) => {
  const b = context.buffer;
  if (!b || !b.text) return;
  context.deps.log.append({ type: 'llm/stream', turnId: context.turnId, stepIndex: context.stepIndex, kind: b.kind, text: b.text });
  // Stryker disable next-line ObjectLiteral: every flush leaves \`requesting\` for \`awaitingTools\`, where no text arrives and the buffer is never read again
  enqueue.assign({ buffer: undefined });
});

/** One model request and the calls it asks for: `requesting` (streamed, retried or compacted on a request error), then the scheduler, then `step/end`. */
export const stepMachine = setup({
  types: {
    context: {} as StepContext,
    input: {} as StepInput,
    events: {} as StepEvent,
    output: {} as StepOutput,
    /** The step's children by id: the model's response stream, then the scheduler of its calls. */
    children: {} as { model: 'modelStream'; scheduler: 'scheduler' },
  },
  actors: { scheduler: schedulerMachine, modelStream: modelStreamLogic },
  actions: {
    flush: flushBuffer as never,
    bufferText: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'MODEL.TEXT');
      if (event.delta) context.deps.onText?.(context.stepIndex, event.kind, event.delta);
      const b = context.buffer;
      if (event.providerMetadata) {
        // A reasoning block closed: logged now, with its metadata, so it can be replayed as a block.
        logReasoningEnd(context.deps.log, context.turnId, context.stepIndex, b, event.delta, event.providerMetadata);
        enqueue.assign({ buffer: undefined });
        return;
      }
      const limit = context.deps.coalesceChars ?? 8192;
      if (b && b.kind !== event.kind) {
        context.deps.log.append({ type: 'llm/stream', turnId: context.turnId, stepIndex: context.stepIndex, kind: b.kind, text: b.text });
        enqueue.assign({ buffer: { kind: event.kind, text: event.delta } });
        return;
      }
      const text = (b?.text ?? '') + event.delta;
      if (text.length >= limit) {
        context.deps.log.append({ type: 'llm/stream', turnId: context.turnId, stepIndex: context.stepIndex, kind: event.kind, text });
        enqueue.assign({ buffer: undefined });
      } else {
        enqueue.assign({ buffer: { kind: event.kind, text } });
      }
    }),
    /**
     * Streamed tool calls (those that arrived together): logs the text before them, counts them and
     * hands them to the scheduler. One action (one context update) per batch rather than flush +
     * assign + sendTo per call.
     */
    forwardCall: enqueueActions(({ context, event, enqueue }) => {
      assertEvent(event, 'MODEL.TOOL_CALL');
      // Never empty: the model stream reports calls only when some are ready.
      const requests: ToolCallRequest[] = 'calls' in event ? event.calls.map(requestOf) : [requestOf(event)];
      const b = context.buffer;
      // A buffer holds text: empty deltas are never reported.
      const flushed = b !== undefined;
      if (flushed) {
        context.deps.log.append({ type: 'llm/stream', turnId: context.turnId, stepIndex: context.stepIndex, kind: b.kind, text: b.text });
      }
      const toolCalls = context.toolCalls + requests.length;
      enqueue.assign(flushed ? { buffer: undefined, toolCalls } : { toolCalls });
      // The scheduler is created with the first call: a step that only answers with text needs none.
      if (context.toolCalls === 0) {
        enqueue.spawnChild('scheduler', {
          id: 'scheduler',
          input: {
            pipeline: context.deps.pipeline,
            log: context.deps.log,
            turnId: context.turnId,
            stepIndex: context.stepIndex,
            concurrency: context.deps.concurrency,
          },
        });
      }
      enqueue.sendTo('scheduler', { type: 'CALL.ADD', requests });
    }),
    /** Tells the scheduler (if a call created one) that no more calls come. */
    closeInput: enqueueActions(({ context, enqueue }) => {
      if (context.toolCalls === 0) return;
      enqueue.sendTo('scheduler', { type: 'INPUT.END', finishReason: context.finishReason, error: context.error ?? context.droppedMidResponse });
    }),
    /** Passes a cancel on to the scheduler, if a call created one. */
    cancelCalls: enqueueActions(({ context, event, enqueue }) => {
      if (context.toolCalls === 0) return;
      assertEvent(event, 'CANCEL');
      enqueue.sendTo('scheduler', { type: 'CANCEL', reason: event.reason });
    }),
    recordRequestError: ({ context }) => {
      const d = context.decision!;
      context.deps.log.append({
        type: 'agent/request-error',
        turnId: context.turnId,
        stepIndex: context.stepIndex,
        attempt: context.attempt,
        kind: d.kind,
        status: d.status,
        message: d.message,
        action: d.action,
        delayMs: d.delayMs,
      });
    },
  },
  guards: {
    callsArrived: ({ context }) => context.toolCalls > 0,
    noCalls: ({ context }) => context.toolCalls === 0,
    retry: ({ context }) => context.decision!.action === 'retry',
    /** The response broke off after calls arrived, and the policy would retry it: keep the calls, go on. */
    continueAfterCalls: ({ context, event }) => {
      assertEvent(event, 'MODEL.ERROR');
      return context.toolCalls > 0 && context.deps.onRequestError(event.error, context.attempt, context.compactions).action === 'retry';
    },
    compact: ({ context }) => context.decision!.action === 'compact',
    startsCancelled: ({ context }) => context.cancelled,
    startsLive: ({ context }) => !context.cancelled,
    /** The fallback after `continueAfterCalls` and `callsArrived` (named for the diagram): the request failed before any of its calls arrived: the policy decides (retry, compact, give up). */
    noCallsYet: () => true,
    /** The fallback after `retry` (and `compact`), named for the diagram: the decision is `give-up`. */
    giveUp: () => true,
  },
  delays: {
    // A retry's delay is always set (boundDecision).
    retryDelay: ({ context }) => context.decision!.delayMs!,
  },
}).createMachine({
  id: 'step',
  context: ({ input }) => ({
    deps: input.deps,
    turnId: input.turnId,
    stepIndex: input.stepIndex,
    attempt: 1,
    compactions: 0,
    buffer: undefined,
    toolCalls: 0,
    // Stryker disable next-line StringLiteral: never read: every way to `awaitingTools` sets the finish reason first
    finishReason: 'unknown',
    cancelled: input.cancelled === true,
    error: undefined,
    decision: undefined,
    results: [],
  }),
  initial: 'starting',
  states: {
    starting: {
      entry: ({ context }) => context.deps.log.append({ type: 'step/start', turnId: context.turnId, stepIndex: context.stepIndex }),
      always: [
        { guard: 'startsCancelled', target: 'awaitingTools', actions: assign({ finishReason: 'cancelled' }) },
        { guard: 'startsLive', target: 'requesting' },
      ],
    },
    requesting: {
      invoke: {
        id: 'model',
        src: 'modelStream',
        input: ({ context }) => ({
          model: context.deps.model,
          prompt: context.deps.prompt(),
          tools: context.deps.tools,
          callOptions: context.deps.callOptions,
          onWarnings: (warnings: Parameters<typeof logModelWarnings>[3]) => logModelWarnings(context.deps.log, context.turnId, context.stepIndex, warnings),
        }),
      },
      on: {
        'MODEL.TEXT': { actions: 'bufferText' },
        'MODEL.TOOL_CALL': { actions: 'forwardCall' },
        'MODEL.FINISH': {
          target: 'awaitingTools',
          actions: ['flush', assign({ finishReason: ({ event }) => event.finishReason, usage: ({ context, event }) => stepUsageAfter(context.usage, event.usage) })],
        },
        'MODEL.ERROR': [
          {
            // The connection broke after calls arrived: what completed is kept (its results reach the
            // model), calls not started get ABORTED_BEFORE_DISPATCH, and the turn goes on with a new
            // request (a new step, so maxSteps bounds it).
            guard: 'continueAfterCalls',
            target: 'awaitingTools',
            actions: [
              'flush',
              assign({
                decision: ({ context, event }) => {
                  const d = context.deps.onRequestError(event.error, context.attempt, context.compactions);
                  return { ...d, action: 'retry' as const, delayMs: 0, message: `${d.message} (the response broke off after ${context.toolCalls} call(s); they are kept and a new request follows)` };
                },
              }),
              'recordRequestError',
              assign({ finishReason: 'error', droppedMidResponse: ({ context }) => `the model's response broke off: ${context.decision!.message}` }),
            ],
          },
          {
            // Part of the response is already acted on: no retry in place; close what arrived.
            guard: 'callsArrived',
            target: 'awaitingTools',
            actions: [
              'flush',
              assign({
                decision: ({ context, event }) => ({ ...context.deps.onRequestError(event.error, context.attempt, context.compactions), action: 'give-up' as const }),
              }),
              'recordRequestError',
              assign({ finishReason: 'error', error: ({ context }) => `model request failed mid-response: ${context.decision!.message}` }),
            ],
          },
          {
            guard: 'noCallsYet',
            target: 'recovering',
            actions: [
              assign({
                buffer: undefined,
                decision: ({ context, event }) =>
                  boundDecision(context.deps.onRequestError(event.error, context.attempt, context.compactions), context.attempt, requestAttemptCap(context.deps.maxAttempts)),
              }),
              'recordRequestError',
            ],
          },
        ],
        CANCEL: {
          target: 'awaitingTools',
          actions: ['flush', assign({ cancelled: true, finishReason: 'cancelled' }), 'cancelCalls'],
        },
      },
    },
    /** A request failed before any of its tool calls arrived: retry, compact, or give up. */
    recovering: {
      always: [
        { guard: 'retry', target: 'backingOff' },
        { guard: 'compact', target: 'compacting' },
        {
          guard: 'giveUp',
          target: 'awaitingTools',
          actions: assign({ finishReason: 'error', error: ({ context }) => `model request failed (${context.decision!.kind}): ${context.decision!.message}` }),
        },
      ],
    },
    backingOff: {
      after: { retryDelay: { target: 'requesting', actions: assign({ attempt: ({ context }) => context.attempt + 1 }) } },
      on: { CANCEL: { target: 'awaitingTools', actions: assign({ cancelled: true, finishReason: 'cancelled' }) } },
    },
    compacting: {
      entry: assign({ decision: ({ context }) => (context.deps.compact() ? { ...context.decision!, action: 'retry' as const } : { ...context.decision!, action: 'give-up' as const }) }),
      always: [
        {
          guard: 'retry',
          target: 'requesting',
          actions: assign({ attempt: ({ context }) => context.attempt + 1, compactions: ({ context }) => context.compactions + 1 }),
        },
        {
          guard: 'giveUp',
          target: 'awaitingTools',
          actions: assign({ finishReason: 'error', error: ({ context }) => `context overflow, and compaction could not shrink the prompt: ${context.decision!.message}` }),
        },
      ],
    },
    awaitingTools: {
      entry: 'closeInput',
      // No call arrived: no scheduler was created, so there is nothing to wait for.
      always: { guard: 'noCalls', target: 'ending' },
      on: {
        'xstate.done.actor.scheduler': { target: 'ending', actions: assign({ results: ({ event }) => event.output.results }) },
        CANCEL: {
          actions: [assign({ cancelled: true }), 'cancelCalls'],
        },
      },
    },
    ending: {
      entry: ({ context }) =>
        context.deps.log.append({
          type: 'step/end',
          turnId: context.turnId,
          stepIndex: context.stepIndex,
          finishReason: context.cancelled ? 'cancelled' : context.finishReason,
          toolCalls: context.toolCalls,
          ...(context.usage ? { usage: context.usage } : {}),
        }),
      always: 'done',
    },
    done: { type: 'final' },
  },
  output: ({ context }) => ({
    toolCalls: context.toolCalls,
    finishReason: context.cancelled ? 'cancelled' : context.finishReason,
    cancelled: context.cancelled,
    error: context.error,
    results: context.results,
  }),
});
