/**
 * What a turn's steps are given (`StepDeps`): the pipeline, the log, the model, the tools as they
 * are at each request, the prompt projected from the log, and the retry policy. Two kinds: a turn's
 * ordinary deps (`TurnStepDeps`), and a resumed turn's (`ResumedStepDeps`), whose first step
 * continues the suspended step from the log and whose later steps are ordinary.
 *
 * Classes, so the getters are on the prototype: a getter in an object literal is a new function per
 * turn, which gives each turn's deps a hidden class of its own, referenced from old space, so V8's
 * young-generation GC keeps everything it closes over (the turn, its runtime) alive until a full GC.
 */
import type { LanguageModelV3, LanguageModelV3FunctionTool, LanguageModelV3Prompt } from '@ai-sdk/provider';
import * as z from 'zod';
import type { CallStages } from '../../../machines/callStages.js';
import { mergeModelCallOptions, type ModelCallOptions } from '../../../machines/modelCallOptions.js';
import type { LogPort } from '../../../machines/commitGate.js';
import type { RequestErrorDecision, StepDeps } from '../../../machines/step.js';
import type { AnyTool } from '../defineTool.js';
import { fitBeforeRequest } from '../context/fitContext.js';
import { classifyRequestError, type RequestRetryPolicy } from '../requestErrors.js';
import type { ResumedStep } from '../resume/resumedStep.js';
import type { TurnDeltaHub } from '../turnDeltas.js';
import type { TurnOptions, TurnRunnerDeps } from './types.js';

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

/** One turn's part of the deps: who it is, and what it is told before each model request. */
export interface TurnOfDeps {
  readonly turnId: string;
  readonly options: TurnOptions;
  readonly policy: RequestRetryPolicy;
  readonly hub: TurnDeltaHub;
  /** The turn is about to make a model request: steering messages enter the log now. */
  beforeRequest(): void;
}

/** An ordinary turn's step deps. */
export class TurnStepDeps implements StepDeps {
  readonly pipeline: CallStages;
  readonly log: LogPort;
  readonly model: LanguageModelV3;
  readonly concurrency: number;
  readonly callOptions: ModelCallOptions | undefined;
  readonly maxAttempts: number | undefined;
  readonly #runner: TurnRunnerDeps;
  readonly #turn: TurnOfDeps;

  constructor(runner: TurnRunnerDeps, turn: TurnOfDeps) {
    this.#runner = runner;
    this.#turn = turn;
    this.pipeline = runner.pipeline;
    // XState leaves a crashed step's children running: the runtime's log is a step-routed view
    // (log/stepRoutedLog.ts), so what they append once the step is closed does not land in it.
    this.log = runner.log;
    this.model = turn.options.model;
    this.concurrency = runner.concurrency;
    this.callOptions = mergeModelCallOptions(runner.callOptions, turn.options.callOptions);
    this.maxAttempts = turn.policy.maxAttempts;
  }

  /** Read at each model request: registry changes queued during a batch land between steps. */
  get tools(): readonly LanguageModelV3FunctionTool[] {
    this.#runner.beforeStep?.();
    return this.#runner.tools().map(toFunctionTool);
  }

  /** Before each model request: steering messages enter the log, then the prompt is projected from it. */
  prompt(): LanguageModelV3Prompt {
    this.#turn.beforeRequest();
    return this.project();
  }

  /** The prompt as the log stands (no steering delivered). */
  project(): LanguageModelV3Prompt {
    const r = this.#runner;
    const { turnId, options } = this.#turn;
    return r.contextWindow
      ? fitBeforeRequest(r.log, r.contextWindow, { turnId, system: options.system, argLimits: r.argLimits })
      : // The projection kept as the log grows (log/sessionIndex.ts): a request renders what changed.
        r.log.index.prompt.render({ system: options.system, turnId, argLimits: r.argLimits });
  }

  onText(stepIndex: number, kind: 'text' | 'reasoning', delta: string): void {
    this.#turn.hub.text(stepIndex, kind, delta);
  }

  onRequestError(error: unknown, attempt: number, compactions: number): RequestErrorDecision {
    const info = classifyRequestError(error, { signal: this.#turn.options.signal, now: this.#runner.clock.now() });
    const d = this.#turn.policy.decide({ kind: info.kind, attempt, compactionsTried: compactions, retryAfterMs: info.retryAfterMs });
    const base = { kind: info.kind, status: info.status, message: info.message };
    if (d.action === 'retry') return { ...base, action: 'retry', delayMs: d.delayMs };
    if (d.action === 'compact') return { ...base, action: 'compact' };
    return { ...base, message: `${info.message} (${d.reason})`, action: 'give-up' };
  }

  compact(): boolean {
    const r = this.#runner;
    return r.compact({ log: r.log, turnId: this.#turn.turnId, system: this.#turn.options.system, argLimits: r.argLimits });
  }
}

/**
 * A resumed turn's step deps: until the resumed step's `step/end` is in the log, its pipeline, log
 * and model are the resumed step's (resume/resumedStep.ts: the logged calls replayed, nothing logged
 * twice); after it, the turn's ordinary ones. The replayed request is not the model's: steering
 * messages wait for the first real request (the step after the suspended one).
 */
export class ResumedStepDeps implements StepDeps {
  readonly #turn: TurnStepDeps;
  readonly #step: ResumedStep;

  constructor(turn: TurnStepDeps, step: ResumedStep) {
    this.#turn = turn;
    this.#step = step;
  }

  get pipeline(): CallStages {
    return this.#step.ended ? this.#turn.pipeline : this.#step.pipeline;
  }
  get log(): LogPort {
    return this.#step.ended ? this.#turn.log : this.#step.log;
  }
  get model(): LanguageModelV3 {
    return this.#step.ended ? this.#turn.model : this.#step.model;
  }
  get tools(): readonly LanguageModelV3FunctionTool[] {
    return this.#turn.tools;
  }
  get concurrency(): number {
    return this.#turn.concurrency;
  }
  get callOptions(): ModelCallOptions | undefined {
    return this.#turn.callOptions;
  }
  get maxAttempts(): number | undefined {
    return this.#turn.maxAttempts;
  }
  prompt(): LanguageModelV3Prompt {
    return this.#step.ended ? this.#turn.prompt() : this.#turn.project();
  }
  onText(stepIndex: number, kind: 'text' | 'reasoning', delta: string): void {
    this.#turn.onText(stepIndex, kind, delta);
  }
  onRequestError(error: unknown, attempt: number, compactions: number): RequestErrorDecision {
    return this.#turn.onRequestError(error, attempt, compactions);
  }
  compact(): boolean {
    return this.#turn.compact();
  }
}
