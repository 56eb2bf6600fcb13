/**
 * Running turns: wires the turn machine to the runtime's log, pipeline, model, retry policy and
 * compaction. The model's prompt is always projected from the log at request time.
 */
import type { LanguageModelV3, LanguageModelV3FunctionTool } from '@ai-sdk/provider';
import { z } from 'zod';
import { createActor, toPromise, type ActorRefFrom, type InspectionEvent } from 'xstate';
import type { CallPipeline } from '../../machines/callPipeline.js';
import type { RequestErrorDecision, StepDeps } from '../../machines/step.js';
import { turnMachine, type TurnOutput } from '../../machines/turn.js';
import type { Clock } from './clock.js';
import type { AnyTool } from './defineTool.js';
import type { SessionLog } from './log/sessionLog.js';
import { closeOpenWork } from './openWork.js';
import { projectPrompt } from './projection/prompt.js';
import { classifyRequestError, createRequestRetryPolicy, type RequestRetryPolicy } from './requestErrors.js';

export interface TurnOptions {
  /** Any AI SDK `LanguageModelV3` provider, or `scriptedModel(...)`. */
  model: LanguageModelV3;
  /** The user's request that opens the turn. */
  input: string;
  system?: string;
  /** At most this many model requests that open steps (default 16). */
  maxSteps?: number;
  /** Aborting it cancels the turn (same as `handle.cancel()`). */
  signal?: AbortSignal;
  /** XState inspection events of the turn and every child (steps, scheduler, calls): for UIs. */
  inspect?: (event: InspectionEvent) => void;
}

export interface TurnHandle {
  readonly turnId: string;
  /** The running turn actor: subscribe for snapshots; children are the step, scheduler and calls. */
  readonly actor: ActorRefFrom<typeof turnMachine>;
  /** Settles after `turn/end` is in the log. Never rejects for tool or model failures. */
  readonly done: Promise<TurnOutput>;
  cancel(reason?: string): void;
}

/** Compacts the model's view of the log; returns true only when the projected prompt shrank. */
export type CompactFn = (ctx: { log: SessionLog; turnId: string; system?: string }) => boolean;

export interface TurnRunnerDeps {
  log: SessionLog;
  pipeline: CallPipeline;
  clock: Clock;
  concurrency: number;
  tools: () => readonly AnyTool[];
  /** Runs before each model request, when no call of this turn is in flight: registry changes land here. */
  beforeStep?: () => void;
  /** Told when a turn starts and when it has ended. */
  onTurnActive?: (delta: 1 | -1) => void;
  retryPolicy?: RequestRetryPolicy;
  compact: CompactFn;
  newTurnId: () => string;
}

const schemaCache = new WeakMap<AnyTool, LanguageModelV3FunctionTool>();

/** The tool as the model sees it: name, description and JSON Schema of its input. */
export function toFunctionTool(tool: AnyTool): LanguageModelV3FunctionTool {
  let def = schemaCache.get(tool);
  if (!def) {
    def = {
      type: 'function',
      name: tool.name,
      description: tool.description,
      inputSchema: (tool.inputJsonSchema ?? z.toJSONSchema(tool.input, { unrepresentable: 'any' })) as LanguageModelV3FunctionTool['inputSchema'],
    };
    schemaCache.set(tool, def);
  }
  return def;
}

export function createTurnRunner(deps: TurnRunnerDeps) {
  const policy = deps.retryPolicy ?? createRequestRetryPolicy();

  return function startTurn(options: TurnOptions): TurnHandle {
    const turnId = deps.newTurnId();
    // Steps whose actor crashed: XState leaves a crashed actor's children running, so anything they
    // would still append for that step is dropped (and noted) once the step has been closed.
    const closedSteps = new Set<number>();
    const stepLog: StepDeps['log'] = {
      append(event) {
        const stepIndex = 'stepIndex' in event ? event.stepIndex : undefined;
        if (stepIndex === undefined || !closedSteps.has(stepIndex)) return deps.log.append(event);
        return deps.log.append({
          type: 'warning',
          turnId,
          code: 'LATE_EVENT_DISCARDED',
          message: `a ${event.type} event for step ${stepIndex} arrived after that step crashed and was closed; it was discarded`,
          data: { type: event.type, ...('callId' in event ? { callId: event.callId } : {}) },
        });
      },
    };
    const stepDeps: StepDeps = {
      pipeline: deps.pipeline,
      log: stepLog,
      model: options.model,
      // Read at each model request (a getter): a step sees the tools as they are when it starts,
      // and changes queued during a batch (an MCP server's listChanged) land between steps.
      get tools() {
        deps.beforeStep?.();
        return deps.tools().map(toFunctionTool);
      },
      concurrency: deps.concurrency,
      prompt: () => projectPrompt(deps.log.events(), { system: options.system, turnId }),
      onRequestError(error, attempt, compactions): RequestErrorDecision {
        const info = classifyRequestError(error, { signal: options.signal, now: deps.clock.now() });
        const d = policy.decide({ kind: info.kind, attempt, compactionsTried: compactions, retryAfterMs: info.retryAfterMs });
        const base = { kind: info.kind, status: info.status, message: info.message };
        if (d.action === 'retry') return { ...base, action: 'retry', delayMs: d.delayMs };
        if (d.action === 'compact') return { ...base, action: 'compact' };
        return { ...base, message: `${info.message} (${d.reason})`, action: 'give-up' };
      },
      compact: () => deps.compact({ log: deps.log, turnId, system: options.system }),
    };
    const actor = createActor(turnMachine, {
      input: {
        deps: stepDeps,
        turnId,
        input: options.input,
        maxSteps: options.maxSteps,
        closeCrashedStep: (id, stepIndex, error) => {
          // The turn itself is still running: it writes its own turn/end.
          closeOpenWork(deps.log, `the step running this call crashed (${String(error)})`, { turnId: id, stepIndex }, false);
          closedSteps.add(stepIndex);
        },
      },
      clock: deps.clock,
      inspect: options.inspect,
    });
    deps.onTurnActive?.(1);
    const done = toPromise(actor);
    void done.then(
      () => deps.onTurnActive?.(-1),
      () => deps.onTurnActive?.(-1),
    );
    const cancel = (reason?: string) => {
      if (actor.getSnapshot().status === 'active') actor.send({ type: 'CANCEL', reason });
    };
    actor.start();
    // An already-aborted signal cancels before the first request (SPEC §8.9): no model call at all.
    if (options.signal?.aborted) cancel('aborted');
    else {
      options.signal?.addEventListener('abort', () => cancel('aborted'), { once: true });
      actor.send({ type: 'START' });
    }
    return { turnId, actor, done, cancel };
  };
}
