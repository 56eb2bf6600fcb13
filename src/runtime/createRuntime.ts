/**
 * `createRuntime`: a session's runtime assembled from its named parts (the pipeline's stages, the
 * turn runner, `runCall`, telemetry, spill, tool changes, disposers), each in its own file. What
 * it returns is the `Runtime` interface (runtime.ts). Browser-safe.
 */
import type { PipelineLimits } from '../../machines/callStages.js';
import type { ModelCallOptions } from '../../machines/modelCallOptions.js';
import { deepFreeze, defaultArgLimits, type ArgLimits } from './args.js';
import { systemClock, type Clock } from './clock.js';
import { compactAndMeasure, defaultCompactor, type Compactor } from './context/compaction.js';
import { foldOnOverflow, resolveContextWindow, type ContextWindow } from './context/fitContext.js';
import { ToolRegistry, type AnyTool } from './defineTool.js';
import { createDisposers } from './disposers.js';
import { GuardRegistry, HookRegistry, type ListenerWrapper } from './hooks.js';
import type { InspectOption } from './inspection/inspectionEvents.js';
import { createStageStream } from './inspection/stageStream.js';
import { createMemoryLog, type SessionLog } from './log/sessionLog.js';
import { createStepRoutedLog } from './log/stepRoutedLog.js';
import { checkMessageSize, DEFAULT_MESSAGE_LIMITS, steerLimiter, type MessageLimits } from './messageLimits.js';
import { createCallStages, type ApprovalService } from './pipeline/index.js';
import type { RequestRetryPolicy } from './requestErrors.js';
import { pendingSuspensionOf, type PendingSuspension } from './resume/pendingSuspension.js';
import { createResumedStep } from './resume/resumedStep.js';
import { createSuspensionRequests } from './resume/suspendTurn.js';
import { createCallRunner } from './runCall.js';
import type { Runtime } from './runtime.js';
import { installSpill } from './spill/installSpill.js';
import { createMemorySpillStore } from './spill/memorySpillStore.js';
import type { SpillStore } from './spill/spillStore.js';
import type { Telemetry } from './telemetry/telemetryOptions.js';
import { wireTelemetry } from './telemetry/turnTelemetry.js';
import { createToolChanges } from './toolChanges.js';
import { createTurnRunner, type CompactFn } from './turns.js';

/** What `createRuntime` is made of: the tools, the log, the clock, the approval service, limits, spill, context and request policies, inspection and telemetry. Every field is optional. */
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
  /** Wraps every listener and guard registered through the runtime (a test harness's hook: dsh/testing's `explore` passes one). */
  wrapListener?: ListenerWrapper;
  /**
   * Every result carries its per-stage durations (`metadata.durationsMs`, ms on the runtime's clock,
   * the stages the call entered and `total`), so a recorded session shows each call's stages with
   * their timings. Default false.
   */
  stageTimings?: boolean;
  /** Least spacing (ms, on the runtime's clock) of one call's `tool/progress` events (default 250). */
  progressIntervalMs?: number;
  /**
   * OpenTelemetry traces and metrics in the GenAI semantic conventions (docs/telemetry.md): the
   * `@opentelemetry/api` module, a tracer, a meter, injected. Absent (the default), nothing is
   * observed and `@opentelemetry/api` is never loaded.
   */
  telemetry?: Telemetry;
}

/** Default limits (ms): see `PipelineLimits`. The per-call deadline is generous on purpose: 10 minutes. */
export const defaultLimits: PipelineLimits = { hookTimeoutMs: 30_000, approvalTimeoutMs: 300_000, abortGraceMs: 2_000, callTimeoutMs: 600_000 };

export { crashedCallResult } from './runCall.js';
export type { CallHandle, Runtime, RunCallOptions } from './runtime.js';

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
export function createRuntime(options: RuntimeOptions = {}): Runtime {
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
  const argLimits: ArgLimits = { ...defaultArgLimits, ...options.argLimits };
  const spillStore = options.spillStore === false ? undefined : (options.spillStore ?? createMemorySpillStore());
  if (spillStore) {
    installSpill(hooks, {
      store: spillStore,
      log: routedLog,
      clock,
      limits,
      ...(options.maxInlineBytes !== undefined ? { maxInlineBytes: options.maxInlineBytes } : {}),
      ...(options.spillSaveTimeoutMs !== undefined ? { spillSaveTimeoutMs: options.spillSaveTimeoutMs } : {}),
    });
  }
  // A window that cannot work is a configuration error, reported now rather than at a turn.
  if (options.contextWindow) resolveContextWindow(options.contextWindow);
  // Approvals that outlive the process (issue 15.4): a `suspend` answer parks its call here.
  const suspensions = createSuspensionRequests();
  // Every stage reports itself to the stage stream, heard only while someone listens.
  const stages = createStageStream({ clock, record: (event) => void routedLog.append(event) });
  const pipeline = createCallStages({
    tools,
    hooks,
    guards,
    log: routedLog,
    clock,
    limits,
    argLimits,
    approval: options.approval,
    suspensions: suspensions.requests,
    context: deepFreeze(structuredClone(options.context ?? {})),
    ...(options.progressIntervalMs !== undefined ? { progressIntervalMs: options.progressIntervalMs } : {}),
    stageTimings: options.stageTimings === true,
    stages,
  });
  const telemetry = wireTelemetry(options.telemetry, { clock, log, stages });
  const runCall = createCallRunner({ stages, pipeline, log: routedLog, clock, ...(options.inspect ? { inspect: options.inspect } : {}) });
  const toolChanges = createToolChanges();
  const disposers = createDisposers(log, () => telemetry.close());

  // Turn ids go on from the turns already in the log (a resumed session).
  let turns = log.index.turnCount;
  const concurrency = options.concurrency ?? 8;
  const startTurn = createTurnRunner({
    log: routedLog,
    pipeline,
    clock,
    concurrency,
    tools: () => tools.list(),
    beforeStep: toolChanges.apply,
    onTurnActive: toolChanges.onTurnActive,
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
    isSuspended: () => pendingSuspensionOf(log) !== undefined,
  });

  // Most sessions never suspend: the log is searched for a pending suspension only once the
  // session's index has seen one (pendingSuspension.ts).
  const pendingSuspension = (): PendingSuspension | undefined => pendingSuspensionOf(log);
  const wrap = options.wrapListener;

  return {
    log,
    clock,
    pipeline,
    limits,
    concurrency,
    spillStore,
    messageLimits,
    startTurn: (turnOptions) => {
      checkMessageSize(turnOptions?.input, 'prompt', messageLimits);
      if (pendingSuspension()) throw new Error('the session has a suspended turn waiting for approval: resume it first (resumeTurn)');
      return withSteerLimits(startTurn(telemetry.observed(turnOptions)));
    },
    followUp: (message, followUpOptions) => {
      checkMessageSize(message, 'follow-up', messageLimits);
      return withSteerLimits(startTurn.followUp(message, followUpOptions && telemetry.observed(followUpOptions)));
    },
    pendingSuspension,
    resumeTurn: (turnOptions) => {
      const pending = pendingSuspension();
      if (!pending) throw new Error('resumeTurn: the session has no suspended turn');
      const step = createResumedStep(pending, routedLog, pipeline);
      const off = suspensions.onPark((turnId, callId) => turnId === pending.turnId && step.parkedAgain(callId));
      const handle = startTurn(telemetry.observed({ ...turnOptions, input: pending.turnStart?.input ?? '' }), { pending, step });
      void handle.done.then(off, off);
      return withSteerLimits(handle);
    },
    hooks: {
      on: (hook, name, fn, opts) => hooks.on(hook, name, wrap ? wrap(hook, name, fn) : fn, opts),
      order: (hook, names) => hooks.order(hook, names),
    },
    tools: {
      guard: (fn, name) => guards.add(wrap ? wrap('tools/guard', name ?? 'guard', fn) : fn, name),
      register: (tool) => tools.register(tool),
      unregister: (name) => tools.unregister(name),
      list: () => tools.list(),
      betweenSteps: toolChanges.betweenSteps,
    },
    runCall,
    onStage: (listener) => stages.on(listener),
    onClose: disposers.add,
    close: disposers.close,
  };
}
