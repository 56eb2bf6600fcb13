import { freeze } from 'immer';
import { createActor, toPromise, type ActorRefFrom } from 'xstate';
import { logCall, logResult } from '../../machines/callPair.js';
import { toolCallMachine } from '../../machines/toolCall.js';
import type { PipelineLimits } from '../../machines/callStages.js';
import { describeThrown, ErrorCode, errorResult, type ToolCallRequest, type ToolResult } from '../protocol/index.js';
import { defaultArgLimits, type ArgLimits } from './args.js';
import { createCallStages, type ApprovalService } from './pipeline/index.js';
import { withSpilledValuesDropped } from './spill/spilledResult.js';
import { systemClock, type Clock } from './clock.js';
import { ToolRegistry, type AnyTool } from './defineTool.js';
import { GuardRegistry, HookRegistry, type Guard, type HookMap, type HookName, type ListenerOptions } from './hooks.js';
import { createMemoryLog, type SessionLog } from './log/sessionLog.js';
import { dispatchWhenDurable } from './durableDispatch.js';
import { createStepRoutedLog } from './log/stepRoutedLog.js';
import { sessionIndexOf } from './log/sessionIndex.js';
import { compactAndMeasure, defaultCompactor, type Compactor } from './context/compaction.js';
import { foldOnOverflow, resolveContextWindow, type ContextWindow } from './context/fitContext.js';
import type { RequestRetryPolicy } from './requestErrors.js';
import type { ModelCallOptions } from '../../machines/modelCallOptions.js';
import { createTurnRunner, type CompactFn, type TurnHandle, type TurnOptions } from './turns.js';
import { createMemorySpillStore } from './spill/memorySpillStore.js';
import { DEFAULT_MAX_INLINE_BYTES, DEFAULT_SPILL_SAVE_TIMEOUT_MS, mayExceed, spillPolicy } from './spill/spillPolicy.js';
import type { SpillStore } from './spill/spillStore.js';
import { combineInspect, toXStateInspect, type InspectOption } from './inspection/inspectionEvents.js';
import { createStageRouter } from './inspection/stageRouter.js';
import type { StageListener } from './inspection/stageEvents.js';
import { pendingSuspensionOf, type PendingSuspension } from './resume/pendingSuspension.js';
import { createResumedStep } from './resume/resumedStep.js';
import { createSuspensionRequests } from './resume/suspendTurn.js';
import { checkMessageSize, DEFAULT_MESSAGE_LIMITS, steerLimiter, type MessageLimits } from './messageLimits.js';
import { observeModel } from './telemetry/observeModel.js';
import type { Telemetry } from './telemetry/telemetryOptions.js';

export interface RuntimeOptions {
  tools?: readonly AnyTool[];
  /** The session log (default: a new in-memory log on the runtime's clock). */
  log?: SessionLog;
  clock?: Clock;
  approval?: ApprovalService;
  /** Shared, read-only context handed (deep-frozen) to every tool body. */
  context?: Record<string, unknown>;
  limits?: Partial<PipelineLimits>;
  argLimits?: Partial<ArgLimits>;
  /** How big a prompt, follow-up or steer may be (default 1 MiB each; see messageLimits.ts). Past it: a `MessageLimitError`, nothing logged. */
  messageLimits?: Partial<MessageLimits>;
  /** Most calls of one parallel group running at once (default 8). */
  concurrency?: number;
  /**
   * Where oversized results are saved (SPEC §4); default: an in-memory store. `false` turns the
   * `spill` post-execute policy off. Give the same store to the built-in `read`/`grep` tools.
   */
  spillStore?: SpillStore | false;
  /** Results larger than this many UTF-8 bytes are spilled (default 16 KiB). */
  maxInlineBytes?: number;
  /**
   * Deadline of one spill store `save` (default 10 s, and never more than half the hook timeout):
   * a save that fails or hangs logs a `SPILL_FAILED` warning and the result stays inline.
   */
  spillSaveTimeoutMs?: number;
  /** What to do after a failed model request (default: bounded retries, compaction on overflow). */
  retryPolicy?: RequestRetryPolicy;
  /** Which results to stub on context overflow (default: every step's but the latest). */
  compactor?: Compactor;
  /** Replaces the whole compaction step; must return true only when the projected prompt shrank. */
  compact?: CompactFn;
  /**
   * The context window every model request must fit in (`promptSize` characters, ≈ 4 per token).
   * Given it, old tool results are stubbed and whole old turns folded into a summary before the
   * prompt can overflow; every reduction is a `context/compacted` event.
   */
  contextWindow?: ContextWindow;
  /** Turn ids (default `turn-1`, `turn-2`, …). */
  newTurnId?: () => string;
  /** Per-request settings for every turn's model requests (a turn's own `callOptions` win). */
  callOptions?: ModelCallOptions;
  /**
   * XState inspection of every actor this runtime creates (turns, steps, schedulers, calls, and
   * `runCall`'s), beside each turn's or call's own `inspect`: e.g. `@statelyai/inspect`'s
   * `inspector.inspect`. Absent (the default), no actor is inspected.
   */
  inspect?: InspectOption;
  /** Least spacing (ms, on the runtime's clock) of one call's `tool/progress` events (default 250). */
  progressIntervalMs?: number;
  /**
   * OpenTelemetry traces and metrics in the GenAI semantic conventions (docs/telemetry.md): the
   * `@opentelemetry/api` module, a tracer, a meter, injected. Absent (the default), nothing is
   * observed and `@opentelemetry/api` is never loaded.
   */
  telemetry?: Telemetry;
}

/** Where a lone call runs, and who watches it. */
export interface RunCallOptions {
  index?: number;
  turnId?: string;
  stepIndex?: number;
  /** XState inspection events of the call's actor (id `call-<index>`, systemId `call`). */
  inspect?: InspectOption;
  /** The call's stage events (`stage/entered`, `stage/exited`), in order. */
  onStage?: StageListener;
}

/** Default limits (ms): see `PipelineLimits`. The per-call deadline is generous on purpose: 10 minutes. */
export const defaultLimits: PipelineLimits = { hookTimeoutMs: 30_000, approvalTimeoutMs: 300_000, abortGraceMs: 2_000, callTimeoutMs: 600_000 };

export interface CallHandle {
  readonly actor: ActorRefFrom<typeof toolCallMachine>;
  /** Settles with the frozen result once `tool/result` is in the log. */
  readonly result: Promise<ToolResult>;
  /** Aborts the call (before dispatch: ABORTED_BEFORE_DISPATCH; running: ABORTED). */
  cancel(reason?: string): void;
}

/** The result of a call whose machine itself failed: the call still gets its `tool/result`. */
export function crashedCallResult(request: ToolCallRequest, e: unknown): ToolResult {
  return errorResult(request, { code: ErrorCode.TOOL_FAILED, message: `the call machine failed: ${describeThrown(e)}` });
}

/**
 * Wires tools, hooks, guards, log, clock and approval into a runtime that runs calls through the machines.
 *
 * @example
 * ```ts
 * const rt = createRuntime({ tools: [read] });
 * const result = await rt.runCall({ callId: 'c1', toolName: 'read', input: '{"path":"a.txt"}' }).result;
 * console.log(rt.log.events().map((e) => e.type)); // ['tool/call', 'tool/result']
 * ```
 */
export function createRuntime(options: RuntimeOptions = {}) {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? createMemoryLog({ clock });
  // Everything the runtime appends goes through this view: an event of a step that has already
  // ended (a crashed step's orphaned calls) becomes one LATE_EVENT_DISCARDED warning (SPEC §8.11).
  const routedLog = createStepRoutedLog(log);
  const tools = new ToolRegistry(options.tools ?? []);
  const hooks = new HookRegistry();
  const guards = new GuardRegistry();
  const limits: PipelineLimits = { ...defaultLimits, ...options.limits };
  const messageLimits: MessageLimits = { ...DEFAULT_MESSAGE_LIMITS, ...options.messageLimits };
  const withSteerLimits = steerLimiter(messageLimits);
  const spillStore = options.spillStore === false ? undefined : (options.spillStore ?? createMemorySpillStore());
  if (spillStore) {
    // Registered last so it spills what the model would see after every other listener's rewrite.
    const maxInlineBytes = options.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES;
    // The policy's own save deadline ends before the hook timeout could fail the call closed.
    const saveTimeoutMs = Math.min(options.spillSaveTimeoutMs ?? DEFAULT_SPILL_SAVE_TIMEOUT_MS, limits.hookTimeoutMs / 2);
    hooks.on('tools/post-execute', 'spill', spillPolicy({ store: spillStore, maxInlineBytes, log: routedLog, clock, saveTimeoutMs }), {
      last: true,
      appliesTo: (draft) => mayExceed(draft.content, maxInlineBytes),
    });
  }
  const argLimits: ArgLimits = { ...defaultArgLimits, ...options.argLimits };
  // A window that cannot work is a configuration error, reported now rather than at a turn.
  if (options.contextWindow) resolveContextWindow(options.contextWindow);
  // Approvals that outlive the process (issue 15.4): a `suspend` answer parks its call here.
  const suspensions = createSuspensionRequests();
  // A spilled result carries its preview and locator, never the full text (see spilledResult.ts);
  // bodies wait until their tool/call is durable (a no-op for the in-memory log).
  // The port goes through the stage router: observed (stage events) only while someone listens.
  const stages = createStageRouter(withSpilledValuesDropped(dispatchWhenDurable(createCallStages({
    tools,
    hooks,
    guards,
    log: routedLog,
    clock,
    limits,
    argLimits,
    approval: options.approval,
    suspensions: suspensions.requests,
    context: freeze(structuredClone(options.context ?? {}), true),
    ...(options.progressIntervalMs !== undefined ? { progressIntervalMs: options.progressIntervalMs } : {}),
  }), log)));
  const pipeline = stages.pipeline;

  // Telemetry (issue 27): spans and metrics projected from the log and the stage stream, and the
  // model requests' own start and end. Nothing is subscribed without it.
  const telemetry = options.telemetry?.({ clock });
  const stopTelemetry = telemetry ? [log.subscribe(telemetry.onEvent), stages.on(telemetry.onStage)] : [];
  const observed = <O extends { model?: TurnOptions['model']; followUpOptions?: TurnOptions['followUpOptions'] }>(o: O): O => {
    if (!telemetry) return o;
    const followUpOptions = o.followUpOptions;
    return {
      ...o,
      ...(o.model ? { model: observeModel(o.model, telemetry.onRequest) } : {}),
      ...(followUpOptions ? { followUpOptions: () => observed(followUpOptions()) } : {}),
    };
  };

  /** Runs one call outside any turn: `tool/call` is appended before it runs, `tool/result` after. */
  function runCall(request: ToolCallRequest, at: RunCallOptions = {}): CallHandle {
    const where = { index: at.index ?? 0, turnId: at.turnId, stepIndex: at.stepIndex };
    const callPipeline = at.onStage ? stages.observe(at.onStage) : pipeline;
    const prepared = callPipeline.prepare(request, where);
    const callSeq = logCall(routedLog, where, request, prepared);
    const inspect = toXStateInspect(combineInspect(options.inspect, at.inspect));
    const actor = createActor(toolCallMachine, {
      input: { request, where, pipeline: callPipeline, prepared },
      clock,
      // The same id a call actor has under a scheduler; `systemId` finds it from any inspection event.
      id: `call-${where.index}`,
      systemId: 'call',
      ...(inspect ? { inspect } : {}),
    });
    const result = toPromise(actor)
      .catch((e: unknown): ToolResult => crashedCallResult(request, e))
      .then((r) => {
        logResult(routedLog, where, callSeq, r);
        return r;
      });
    actor.start();
    return { actor, result, cancel: (reason) => actor.send({ type: 'CANCEL', reason }) };
  }

  // Registry changes from outside (an MCP server's listChanged) wait for a step boundary: a batch
  // never sees its tool set change under it. With no turn running, they apply at once.
  let activeTurns = 0;
  const pendingToolChanges: Array<() => void> = [];
  const applyToolChanges = () => {
    for (const change of pendingToolChanges.splice(0)) change();
  };
  const closers: Array<() => Promise<void> | void> = [];
  let closed: Promise<void> | undefined;

  // Turn ids go on from the turns already in the log (a resumed session).
  let turns = sessionIndexOf(log).turnCount;
  const concurrency = options.concurrency ?? 8;
  const startTurn = createTurnRunner({
    log: routedLog,
    pipeline,
    clock,
    concurrency,
    tools: () => tools.list(),
    beforeStep: applyToolChanges,
    onTurnActive: (delta) => {
      activeTurns += delta;
      if (activeTurns === 0) applyToolChanges();
    },
    retryPolicy: options.retryPolicy,
    compact:
      options.compact ??
      (({ log: l, turnId, system }) =>
        compactAndMeasure(l, options.compactor ?? defaultCompactor, { turnId, system, argLimits }).shrank ||
        // Stubbing results was not enough: whole old turns leave the prompt for a digest.
        foldOnOverflow(l, { turnId, system, argLimits })),
    newTurnId: options.newTurnId ?? (() => `turn-${++turns}`),
    callOptions: options.callOptions,
    argLimits,
    ...(options.contextWindow ? { contextWindow: options.contextWindow } : {}),
    stages,
    inspect: options.inspect,
    suspensions,
    ...(log.whenDurable ? { whenDurable: log.whenDurable } : {}),
    isSuspended: () => pendingSuspension() !== undefined,
  });

  /** The suspended turn the session log still waits on (its pending approvals), or undefined. */
  function pendingSuspension(): PendingSuspension | undefined {
    // Most sessions never suspend: the log is searched for a pending suspension only once the
    // session's index has seen one.
    return pendingSuspensionOf(log);
  }

  /**
   * Continues the session's suspended turn (issue 15.4) from the log alone, in this process or
   * another: its pending approvals are asked of this runtime's approval service, the same calls go
   * on from `awaitingApproval`, the calls after them run as planned, and the turn then goes on with
   * `options.model`. The model is not asked again for the suspended step. Throws when nothing is suspended.
   */
  function resumeTurn(turnOptions: Omit<TurnOptions, 'input'>): TurnHandle {
    const pending = pendingSuspension();
    if (!pending) throw new Error('resumeTurn: the session has no suspended turn');
    const step = createResumedStep(pending, routedLog, pipeline);
    const off = suspensions.onPark((turnId, callId) => turnId === pending.turnId && step.parkedAgain(callId));
    const handle = startTurn(observed({ ...turnOptions, input: pending.turnStart?.input ?? '' }), { pending, step });
    void handle.done.then(off, off);
    return withSteerLimits(handle);
  }

  return {
    log,
    clock,
    pipeline,
    limits,
    concurrency,
    /** The store holding full texts of spilled results (undefined when spilling is off). */
    spillStore,
    /**
     * Runs a turn: steps of model requests and tool calls until the model answers (or it suspends
     * on an approval: outcome `suspended`). Throws while the session has a suspended turn.
     */
    startTurn: (turnOptions: TurnOptions): TurnHandle => {
      checkMessageSize(turnOptions?.input, 'prompt', messageLimits);
      if (pendingSuspension()) throw new Error('the session has a suspended turn waiting for approval: resume it first (resumeTurn)');
      return withSteerLimits(startTurn(observed(turnOptions)));
    },
    /**
     * Queues a message as a new turn after the current one ends (`turn/start` with
     * `followUp.kind: 'follow-up'`), with the latest turn's options unless `options` override them.
     */
    followUp: (message: string, followUpOptions?: Parameters<typeof startTurn.followUp>[1]): TurnHandle => {
      checkMessageSize(message, 'follow-up', messageLimits);
      return withSteerLimits(startTurn.followUp(message, followUpOptions && observed(followUpOptions)));
    },
    /** How big a prompt, follow-up or steer may be here. */
    messageLimits,
    pendingSuspension,
    resumeTurn,
    hooks: {
      /** Registers a named listener on a hook; returns its remover. */
      on: <K extends HookName>(hook: K, name: string, fn: HookMap[K], opts?: ListenerOptions) => hooks.on(hook, name, fn, opts),
      /** Fixes the order of a hook's listeners by name. */
      order: (hook: HookName, names: readonly string[]) => hooks.order(hook, names),
    },
    tools: {
      /**
       * Adds a monotonic guard: a string denies, undefined changes nothing. Append-only: there is
       * no remover, and a call consults the guards registered when it started.
       */
      guard: (fn: Guard, name?: string): void => guards.add(fn, name),
      register: (tool: AnyTool) => tools.register(tool),
      /** Removes a tool by name; true when it was registered. */
      unregister: (name: string) => tools.unregister(name),
      list: () => tools.list(),
      /** Runs a registry change now if no turn is running, else before the next step's model request. */
      betweenSteps: (change: () => void) => {
        pendingToolChanges.push(change);
        if (activeTurns === 0) applyToolChanges();
      },
    },
    runCall,
    /**
     * Hears every call's stage events (`stage/entered` / `stage/exited`, with callId, turnId,
     * stepIndex, toolName, time and outcome), turns and `runCall` alike; returns the remover.
     * With no listener the port is not observed at all.
     */
    onStage: (listener: StageListener): (() => void) => stages.on(listener),
    /** Registers a disposer (e.g. an MCP connection) that `close()` runs. */
    onClose: (fn: () => Promise<void> | void) => void closers.push(fn),
    /** Runs every disposer once, latest first; failures are recorded as `warning` events, never thrown. */
    close: (): Promise<void> =>
      (closed ??= (async () => {
        for (const fn of closers.splice(0).reverse()) {
          try {
            await fn();
          } catch (e) {
            log.append({ type: 'warning', code: 'CLOSE_FAILED', message: `a disposer failed while closing the runtime: ${String(e)}` });
          }
        }
        // Spans still open (a run stopped mid-turn) end here, marked unfinished.
        for (const stop of stopTelemetry.splice(0)) stop();
        telemetry?.close();
      })()),
  };
}

export type Runtime = ReturnType<typeof createRuntime>;
