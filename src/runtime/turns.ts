/**
 * Running turns: wires the turn machine to the runtime's log, pipeline, model, retry policy and
 * compaction. The model's prompt is always projected from the log at request time.
 */
import type { LanguageModelV3, LanguageModelV3FunctionTool } from '@ai-sdk/provider';
import * as z from 'zod';
import { createActor, toPromise, type ActorRefFrom, type AnyActorRef } from 'xstate';
import type { CallStages } from '../../machines/callStages.js';
import { mergeModelCallOptions, type ModelCallOptions } from '../../machines/modelCallOptions.js';
import type { RequestErrorDecision, StepDeps } from '../../machines/step.js';
import { turnMachine, type TurnOutput } from '../../machines/turn.js';
import type { ArgLimits } from './args.js';
import type { Clock } from './clock.js';
import type { AnyTool } from './defineTool.js';
import type { SessionLog } from './log/sessionLog.js';
import { closeOpenWork } from './openWork.js';
import { fitBeforeRequest, fitBeforeTurn, type ContextWindow } from './context/fitContext.js';
import { sessionIndexOf } from './log/sessionIndex.js';
import { turnAnswer, type TurnAnswer } from './projection/turnAnswer.js';
import { describeThrown } from '../protocol/index.js';
import { classifyRequestError, createRequestRetryPolicy, type RequestRetryPolicy } from './requestErrors.js';
import { combineInspect, toXStateInspect, type InspectOption } from './inspection/inspectionEvents.js';
import type { StageListener } from './inspection/stageEvents.js';
import type { StageRouter } from './inspection/stageRouter.js';
import { createTurnDeltaHub, type TurnDelta } from './turnDeltas.js';
import type { PendingSuspension } from './resume/pendingSuspension.js';
import type { ResumedStep } from './resume/resumedStep.js';
import type { createSuspensionRequests, TurnSuspension } from './resume/suspendTurn.js';
import type { LogEventOf, TurnOutcome } from '../protocol/index.js';

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
  /**
   * XState inspection events of the turn and every child (steps, scheduler, calls): for UIs. A
   * listener (typed: `ev.actorRef.id` needs no cast) or an observer such as `@statelyai/inspect`'s
   * `inspector.inspect`. The turn actor is `systemId: 'turn'` (id: the turn id).
   */
  inspect?: InspectOption;
  /** The stage events of this turn's calls (same as `handle.onStage(listener)` before anything runs). */
  onStage?: StageListener;
  /** Per-request settings (max output tokens, temperature, tool choice, provider options, headers), over the runtime's. */
  callOptions?: ModelCallOptions;
  /**
   * Options of the follow-up turns made from this turn (a late `steer`, `followUp` while it is the
   * latest turn), over this turn's own: e.g. a fresh model for each turn. Default: this turn's options.
   */
  followUpOptions?: () => Partial<Omit<TurnOptions, 'input'>>;
}

/**
 * Where a steering message went: into the running turn (logged as `user/steer` in step
 * `stepIndex`, before that step's model request), or, when the turn had no request left to make,
 * into a follow-up turn of its own (`turn/start` with `followUp.kind: 'late-steer'`).
 */
export type SteerOutcome =
  | { readonly delivered: 'steer'; readonly stepIndex: number; readonly seq: number }
  | { readonly delivered: 'follow-up'; readonly turn: TurnHandle };

/**
 * How a turn ended, with the model's final answer text and the tokens it used. `suspended`: the
 * turn waits for approvals that outlive the process (`suspension` is its `turn/suspended` event);
 * it has no `turn/end` yet, and `resumeTurn` continues it.
 */
export type TurnResult = Omit<TurnOutput, 'outcome'> &
  TurnAnswer & { readonly outcome: TurnOutcome | 'suspended'; readonly suspension?: LogEventOf<'turn/suspended'> };

/** What resumes a suspended turn: its suspension read from the log, and its resumed step's pieces. */
export interface TurnResume {
  readonly pending: PendingSuspension;
  readonly step: ResumedStep;
}

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
  /**
   * Hears the stage events of this turn's calls from now on (`stage/entered` / `stage/exited`);
   * returns the remover. Listeners are dropped when the turn ends.
   */
  onStage(listener: StageListener): () => void;
  /**
   * Every text and reasoning delta of the turn as it streams, in order and tagged with its step;
   * then `step-end` per step and `turn-end`. Returns the unsubscribe function. Subscribe right after
   * `startTurn`: nothing streams before it returns, and nothing is replayed.
   */
  onDelta(listener: (delta: TurnDelta) => void): () => void;
  /** The same deltas as an async iterable, from now until `turn-end`. */
  deltas(): AsyncIterable<TurnDelta>;
  /**
   * A message for the running turn: it is logged (`user/steer`) and enters the prompt before the
   * turn's next model request, that is after every result of the current step is committed (never
   * inside a tool batch). A steer the turn can no longer deliver (the turn ended, or its last step
   * was already under way: it answered, ran out of steps, failed or was cancelled) becomes a
   * follow-up turn, queued like any turn (`turn/start` with `followUp.kind: 'late-steer'`); several
   * undelivered steers make one turn. Settles before `done` does. Throws a TypeError for an empty message.
   */
  steer(message: string): Promise<SteerOutcome>;
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
  /** The window every request must fit in: old results and turns are compacted to stay inside it. */
  contextWindow?: ContextWindow;
  /** Routes stage events to the turn's listeners (`pipeline` should be its port). */
  stages?: StageRouter;
  /** Inspection of every turn, beside each turn's own `inspect`. */
  inspect?: InspectOption;
  /** Where `suspend` answers park their calls (issue 15.4); absent: turns never suspend. */
  suspensions?: ReturnType<typeof createSuspensionRequests>;
  /** Resolves once the log is durable up to `seq` (a JSONL log); a suspended turn settles after its `turn/suspended` is. */
  whenDurable?: (seq: number) => Promise<void> | undefined;
  /** True while the session has a suspended turn: a queued turn does not begin then. */
  isSuspended?: () => boolean;
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

/**
 * The `tools` of a turn's step deps, read at each model request (a getter): a step sees the tools as
 * they are when it starts, and changes queued during a batch (an MCP server's listChanged) land
 * between steps. A class, so the getter is on the prototype: a getter in an object literal is a new
 * function per turn, which gives each turn's deps a hidden class of its own, referenced from old
 * space, so V8's young-generation GC keeps everything it closes over (the turn, its runtime) alive
 * until a full GC.
 */
class TurnTools {
  readonly #runner: Pick<TurnRunnerDeps, 'beforeStep' | 'tools'>;
  constructor(runner: Pick<TurnRunnerDeps, 'beforeStep' | 'tools'>) {
    this.#runner = runner;
  }
  get tools(): readonly LanguageModelV3FunctionTool[] {
    this.#runner.beforeStep?.();
    return this.#runner.tools().map(toFunctionTool);
  }
}

/** A message for a turn: a non-empty string (a TypeError otherwise: it is the caller's mistake). */
function checkMessage(message: unknown, what: string): string {
  if (typeof message !== 'string' || message.trim() === '') throw new TypeError(`${what}: the message must be a non-empty string`);
  return message;
}

type InternalTurnOptions = TurnOptions & { followUp?: { kind: 'follow-up' | 'late-steer'; after: string } };

export function createTurnRunner(deps: TurnRunnerDeps) {
  const policy = deps.retryPolicy ?? createRequestRetryPolicy();
  /** The latest turn started: what `followUp` continues from (its options, its id). */
  let latest: { turnId: string; options: TurnOptions } | undefined;
  const followUpOptionsOf = (o: TurnOptions): TurnOptions => {
    const { signal: _signal, input: _input, ...rest } = o;
    return { ...rest, ...o.followUpOptions?.(), input: '' };
  };

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

  function startTurn(options: InternalTurnOptions, resume?: TurnResume): TurnHandle {
    const turnId = resume ? resume.pending.turnId : deps.newTurnId();
    // Registered before the turn can start, so its first call's first stage is heard.
    const stageRemovers: Array<() => void> = [];
    let over = false;
    const onStage = (listener: StageListener): (() => void) => {
      if (!deps.stages || over) return () => {};
      const remove = deps.stages.onTurn(turnId, listener);
      stageRemovers.push(remove);
      return remove;
    };
    if (options.onStage) onStage(options.onStage);
    const inspect = toXStateInspect(combineInspect(deps.inspect, options.inspect));
    latest = { turnId, options };
    const hub = createTurnDeltaHub(deps.log, turnId);
    // Steering: messages not yet logged. `phase` says where the turn is: a steer is held until the
    // next model request, and whatever is still held when the turn ends becomes a follow-up turn.
    let phase: 'queued' | 'running' | 'ended' = 'queued';
    const steers: Array<{ text: string; settle: (o: SteerOutcome) => void }> = [];
    const deliverSteers = () => {
      if (steers.length === 0) return;
      const stepIndex = upcomingStep(deps.log, turnId);
      for (const s of steers.splice(0)) {
        const e = deps.log.append({ type: 'user/steer', turnId, stepIndex, text: s.text });
        s.settle({ delivered: 'steer', stepIndex, seq: e.seq });
      }
    };
    const stepDeps: StepDeps = Object.assign(new TurnTools(deps), {
      pipeline: deps.pipeline,
      // XState leaves a crashed step's children running: the runtime's log is a step-routed view
      // (log/stepRoutedLog.ts), so what they append once the step is closed does not land in it.
      log: deps.log,
      model: options.model,
      concurrency: deps.concurrency,
      callOptions: mergeModelCallOptions(deps.callOptions, options.callOptions),
      prompt: () => {
        // Before each model request (its step has started; the steps before it are closed): the
        // steering messages that came meanwhile enter the log, then the prompt is projected from it.
        deliverSteers();
        return deps.contextWindow
          ? fitBeforeRequest(deps.log, deps.contextWindow, { turnId, system: options.system, argLimits: deps.argLimits })
          : // The projection kept as the log grows (log/sessionIndex.ts): a request renders what changed.
            sessionIndexOf(deps.log).prompt.render({ system: options.system, turnId, argLimits: deps.argLimits });
      },
      onText: (stepIndex, kind, delta) => hub.text(stepIndex, kind, delta),
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
    } satisfies Omit<StepDeps, 'tools'>);
    if (resume) {
      // A resumed turn's first step continues from the log (resume/resumedStep.ts); later steps are
      // ordinary. (Getters only here: an ordinary turn's steps read plain properties.)
      const step = resume.step;
      Object.defineProperties(stepDeps, {
        pipeline: { get: () => (step.ended ? deps.pipeline : step.pipeline) },
        log: { get: () => (step.ended ? deps.log : step.log) },
        model: { get: () => (step.ended ? options.model : step.model) },
      });
    }
    const actor = createActor(turnMachine, {
      input: {
        deps: stepDeps,
        turnId,
        input: resume?.pending.turnStart?.input ?? options.input,
        maxSteps: options.maxSteps,
        ...(options.followUp ? { followUp: options.followUp } : {}),
        ...(resume ? { resumeAt: resume.pending.stepIndex } : {}),
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
      // Meaningful ids in every inspection event: the root is the turn (not `x:0`).
      id: turnId,
      systemId: 'turn',
      ...(inspect ? { inspect } : {}),
    });
    let suspension: TurnSuspension | undefined;
    let dropped: string | undefined;
    deps.onTurnActive?.(1);
    // The answer is read from the turn's own events: from where the log stood when it began.
    let firstSeq = resume?.pending.turnStart?.seq ?? deps.log.lastSeq + 1;
    let drop!: () => void;
    const droppedBeforeStart = new Promise<undefined>((r) => (drop = () => r(undefined)));
    // Steers the turn could not deliver: one follow-up turn, queued as the turn ends (before `done` settles).
    const endSteering = () => {
      phase = 'ended';
      if (steers.length === 0) return;
      const late = steers.splice(0);
      const turn = startTurn({ ...followUpOptionsOf(options), input: late.map((s) => s.text).join('\n\n'), followUp: { kind: 'late-steer', after: turnId } });
      for (const s of late) s.settle({ delivered: 'follow-up', turn });
    };
    const done = Promise.race([toPromise(actor), droppedBeforeStart]).then(
      async (out): Promise<TurnResult> => {
        endSteering();
        const suspended = suspension?.event;
        suspension?.dispose();
        if (suspended) {
          // The process may exit once the handle settles: the suspension is on disk by then.
          await Promise.resolve(deps.whenDurable?.(suspended.seq)).catch(() => undefined);
          hub.end('suspended');
          return { turnId, outcome: 'suspended', steps: suspended.stepIndex + 1, ...turnAnswer(deps.log.events({ from: firstSeq }), turnId), suspension: suspended };
        }
        if (dropped !== undefined) {
          hub.end('cancelled');
          return { turnId, outcome: 'cancelled', steps: 0, error: dropped, text: '' };
        }
        return { ...out!, ...turnAnswer(deps.log.events({ from: firstSeq }), out!.turnId) };
      },
      (e: unknown) => {
        // The turn actor itself failed (no `turn/end`): delta listeners are told, steers are not lost.
        hub.end('failed');
        endSteering();
        throw e;
      },
    );
    const ended = () => {
      over = true;
      deps.onTurnActive?.(-1);
      for (const remove of stageRemovers.splice(0)) remove();
      // A signal that outlives the turn (one per session, say) must not keep the ended turn alive.
      options.signal?.removeEventListener('abort', onAbort);
    };
    void done.then(ended, ended);
    let started = false;
    // A cancel (or abort) that came while the turn was queued: applied as it starts.
    let cancelledEarly: { reason?: string } | undefined;
    const cancel = (reason?: string) => {
      if (!started) cancelledEarly ??= { reason };
      else if (actor.getSnapshot().status === 'active') actor.send({ type: 'CANCEL', reason });
    };
    const onAbort = () => cancel('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const begin = () => {
      // Room for the turn is made before it starts (a summariser may take a model request); a
      // cancel meanwhile still counts as one that came while the turn was queued.
      if (deps.contextWindow) {
        const window = deps.contextWindow;
        void fitBeforeTurn(deps.log, window, { turnId, clock: deps.clock, system: options.system, argLimits: deps.argLimits, ...(options.signal ? { signal: options.signal } : {}) })
          .catch((e: unknown) => {
            deps.log.append({ type: 'warning', turnId, code: 'COMPACTION_FAILED', message: `making room before the turn failed: ${describeThrown(e)}` });
          })
          .then(run);
      } else run();
    };
    const run = () => {
      started = true;
      phase = 'running';
      if (!resume && deps.isSuspended?.()) {
        // Queued behind a turn that then suspended: it does not begin (nothing is logged), so the
        // suspended turn stays the session's last and can be resumed.
        dropped = 'the session has a suspended turn (resume it first); this queued turn did not start';
        drop();
        return;
      }
      if (deps.suspensions) {
        suspension = deps.suspensions.watch({ actor, turnId, append: (e) => deps.log.append(e), onSuspended: () => {} });
      }
      if (!resume) firstSeq = deps.log.lastSeq + 1;
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
    const steer = (message: string): Promise<SteerOutcome> => {
      const text = checkMessage(message, 'steer');
      if (phase === 'ended') {
        const turn = startTurn({ ...followUpOptionsOf(options), input: text, followUp: { kind: 'late-steer', after: turnId } });
        return Promise.resolve({ delivered: 'follow-up', turn });
      }
      return new Promise((settle) => steers.push({ text, settle }));
    };
    return { turnId, actor, done, cancel, onStage, onDelta: hub.subscribe, deltas: hub.iterate, steer };
  }

  /**
   * Queues `message` as a new turn after the current one (and any queued before it) ends, with the
   * latest turn's options (model, system, …) unless `options` say otherwise; logged as a
   * `turn/start` with `followUp.kind: 'follow-up'`. Without a turn before it, `options.model` is required.
   */
  function followUp(message: string, options: Partial<Omit<TurnOptions, 'input'>> = {}): TurnHandle {
    const text = checkMessage(message, 'followUp');
    const base = latest ? followUpOptionsOf(latest.options) : undefined;
    const model = options.model ?? base?.model;
    if (!model) throw new TypeError('followUp: no turn has run yet, so options.model is required');
    return startTurn({
      ...base,
      ...options,
      model,
      input: text,
      ...(latest ? { followUp: { kind: 'follow-up' as const, after: latest.turnId } } : {}),
    });
  }

  return Object.assign(startTurn as (options: TurnOptions, resume?: TurnResume) => TurnHandle, { followUp });
}

/**
 * The step whose model request is being prepared: the turn's open step (a retried request), else
 * the one after its last closed step. (XState runs the step's `step/start` entry after it has
 * started the request, so the next step may not be in the log yet.)
 */
function upcomingStep(log: SessionLog, turnId: string): number {
  for (let seq = log.lastSeq; seq >= 1; seq--) {
    const e = log.get(seq);
    if (e === undefined || !('turnId' in e) || e.turnId !== turnId) continue;
    if (e.type === 'step/start') return e.stepIndex;
    if (e.type === 'step/end') return e.stepIndex + 1;
    if (e.type === 'turn/start') break;
  }
  return 0;
}
