/**
 * Running turns: wires the turn machine to the runtime's log, pipeline, model, retry policy and
 * compaction. The model's prompt is always projected from the log at request time.
 */
import type { LanguageModelV3, LanguageModelV3FunctionTool } from '@ai-sdk/provider';
import { z } from 'zod';
import { createActor, toPromise, type ActorRefFrom, type AnyActorRef, type InspectionEvent } from 'xstate';
import type { CallStages } from '../../machines/callStages.js';
import { mergeModelCallOptions, type ModelCallOptions } from '../../machines/modelCallOptions.js';
import type { RequestErrorDecision, StepDeps } from '../../machines/step.js';
import { turnMachine, type TurnOutput } from '../../machines/turn.js';
import type { ArgLimits } from './args.js';
import type { Clock } from './clock.js';
import type { AnyTool } from './defineTool.js';
import type { SessionLog } from './log/sessionLog.js';
import { closeOpenWork } from './openWork.js';
import { projectPrompt } from './projection/prompt.js';
import { turnAnswer, type TurnAnswer } from './projection/turnAnswer.js';
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
  /** Per-request settings (max output tokens, temperature, tool choice, provider options, headers), over the runtime's. */
  callOptions?: ModelCallOptions;
}

/** How a turn ended, with the model's final answer text and the tokens it used. */
export type TurnResult = TurnOutput & TurnAnswer;

export interface TurnHandle {
  readonly turnId: string;
  /**
   * The turn actor: subscribe for snapshots; children are the step and its scheduler (call actors have the scheduler as parent but are not in its snapshot: see them with `inspect`). A turn
   * started while another runs is queued: its actor starts only when the turns before it have ended.
   */
  readonly actor: ActorRefFrom<typeof turnMachine>;
  /** Settles after `turn/end` is in the log. Never rejects for tool or model failures. */
  readonly done: Promise<TurnResult>;
  /** Cancels the turn; a queued turn cancelled before it starts ends `cancelled` without a model request. */
  cancel(reason?: string): void;
}

/** Compacts the model's view of the log; returns true only when the projected prompt shrank. */
export type CompactFn = (ctx: { log: SessionLog; turnId: string; system?: string; argLimits?: ArgLimits }) => boolean;

export interface TurnRunnerDeps {
  log: SessionLog;
  pipeline: CallStages;
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
  /** Default per-request settings for every turn. */
  callOptions?: ModelCallOptions;
  /** Raw call arguments are parsed for the prompt only within these limits (the validation limits). */
  argLimits?: ArgLimits;
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

  // One turn at a time per session (SPEC §8.16): a turn started while another runs is queued and
  // begins once every turn before it has ended, so its prompt sees their results and the log never
  // interleaves two turns. Only the queue of not-yet-started turns is kept: nothing per ended turn.
  let running = false;
  const waiting: Array<() => void> = [];
  const beginNext = () => {
    const begin = waiting.shift();
    if (begin) begin();
    else running = false;
  };

  return function startTurn(options: TurnOptions): TurnHandle {
    const turnId = deps.newTurnId();
    const stepDeps: StepDeps = {
      pipeline: deps.pipeline,
      // XState leaves a crashed step's children running: the runtime's log is a step-routed view
      // (log/stepRoutedLog.ts), so what they append once the step is closed does not land in it.
      log: deps.log,
      model: options.model,
      // Read at each model request (a getter): a step sees the tools as they are when it starts,
      // and changes queued during a batch (an MCP server's listChanged) land between steps.
      get tools() {
        deps.beforeStep?.();
        return deps.tools().map(toFunctionTool);
      },
      concurrency: deps.concurrency,
      callOptions: mergeModelCallOptions(deps.callOptions, options.callOptions),
      prompt: () => projectPrompt(deps.log.events(), { system: options.system, turnId, argLimits: deps.argLimits }),
      onRequestError(error, attempt, compactions): RequestErrorDecision {
        const info = classifyRequestError(error, { signal: options.signal, now: deps.clock.now() });
        const d = policy.decide({ kind: info.kind, attempt, compactionsTried: compactions, retryAfterMs: info.retryAfterMs });
        const base = { kind: info.kind, status: info.status, message: info.message };
        if (d.action === 'retry') return { ...base, action: 'retry', delayMs: d.delayMs };
        if (d.action === 'compact') return { ...base, action: 'compact' };
        return { ...base, message: `${info.message} (${d.reason})`, action: 'give-up' };
      },
      maxAttempts: policy.maxAttempts,
      compact: () => deps.compact({ log: deps.log, turnId, system: options.system, argLimits: deps.argLimits }),
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
          // XState leaves a crashed actor's children running: cancel the step's scheduler so its calls
          // stop (bodies aborted, pending approvals withdrawn, nothing new dispatched) now that their
          // results can no longer reach the model. What they still log is routed (stepRoutedLog.ts).
          // Sent once the turn's own action has run: an event processed inside another actor's custom
          // action makes XState warn about (and mistrust) the built-in actions it runs.
          const step = actor.getSnapshot().children.step as AnyActorRef | undefined;
          const scheduler = step?.getSnapshot().children?.scheduler as AnyActorRef | undefined;
          queueMicrotask(() => {
            if (scheduler?.getSnapshot().status === 'active') scheduler.send({ type: 'CANCEL', reason: 'the step running this call crashed' });
          });
        },
      },
      clock: deps.clock,
      inspect: options.inspect,
    });
    deps.onTurnActive?.(1);
    const done = toPromise(actor).then((out): TurnResult => ({ ...out, ...turnAnswer(deps.log.events(), out.turnId) }));
    void done.then(
      () => deps.onTurnActive?.(-1),
      () => deps.onTurnActive?.(-1),
    );
    let started = false;
    // A cancel (or abort) that came while the turn was queued: applied as it starts.
    let cancelledEarly: { reason?: string } | undefined;
    const cancel = (reason?: string) => {
      if (!started) cancelledEarly ??= { reason };
      else if (actor.getSnapshot().status === 'active') actor.send({ type: 'CANCEL', reason });
    };
    options.signal?.addEventListener('abort', () => cancel('aborted'), { once: true });
    const begin = () => {
      started = true;
      actor.start();
      // Cancelled before it began (an already-aborted signal, SPEC §8.9, or a cancel while queued):
      // `turn/start` and `turn/end` (cancelled), no model request at all.
      if (options.signal?.aborted) cancelledEarly ??= { reason: 'aborted' };
      if (cancelledEarly) actor.send({ type: 'CANCEL', reason: cancelledEarly.reason });
      else actor.send({ type: 'START' });
    };
    // Whatever the outcome (even an actor that failed), the next queued turn begins after this one.
    done.then(beginNext, beginNext);
    if (running) waiting.push(begin);
    else {
      running = true;
      begin();
    }
    return { turnId, actor, done, cancel };
  };
}
