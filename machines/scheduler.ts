/**
 * Runs one step's tool calls (SPEC §3): calls arrive in the model's order (`CALL.ADD`, possibly
 * while the model still streams), each gets its `tool/call` event before anything runs, safe calls
 * run in parallel groups bounded by `concurrency`, exclusive calls run alone, and results are
 * committed (`tool/result`) strictly in array order, each as soon as all earlier ones settled.
 *
 * One toolCall actor per running call, spawned as an XState child with the id `call-<index>` and
 * stopped (`stopChild`) as it settles, so live children stay within the concurrency limit. Ids are
 * reused by every step (`call-0` is the first call of any step): XState caches per event type, so
 * an id unique per call would leak ~300 B per call forever; these stay bounded by the largest batch.
 * `callsOf(snapshot)` lists a step's calls in the model's order, each with its live actor.
 */
import { enqueueActions, setup, type ActorRefFrom, type SnapshotFrom } from 'xstate';
import { ErrorCode, errorNameFor, type ToolCallRequest, type ToolResult } from '../src/protocol/index.js';
import type { CallStages } from './callStages.js';
import { allCommitted, emptyGate, GateEdit, logCall, logResult, type BatchEntry, type CommitGate, type EntryStatus, type LogPort } from './commitGate.js';
import { releaseStoppedCall, toolCallMachine, type ToolCallInput } from './toolCall.js';

/** One step's calls to run: the pipeline, the log, and the calls known up front. */
export interface SchedulerInput {
  readonly pipeline: CallStages;
  readonly log: LogPort;
  readonly turnId?: string;
  readonly stepIndex?: number;
  /** Most calls of a parallel group running at once (default 8). */
  readonly concurrency?: number;
  /** Calls known up front (a non-streaming batch); more may still arrive as `CALL.ADD`. */
  readonly calls?: readonly ToolCallRequest[];
  /** True when `calls` is the whole batch (same as sending `INPUT.END` right away). */
  readonly complete?: boolean;
  /** The caller's signal was already aborted: every call gets ABORTED_BEFORE_DISPATCH (SPEC §8.9). */
  readonly cancelled?: boolean;
}

/** The scheduler's context: its ports and the commit gate of the step's calls. */
export interface SchedulerContext {
  readonly pipeline: CallStages;
  readonly log: LogPort;
  readonly turnId: string | undefined;
  readonly stepIndex: number | undefined;
  readonly gate: CommitGate;
  readonly inputClosed: boolean;
  readonly cancelled: boolean;
}

/** The step's results in the model's order, whether it was cancelled, and the most calls that ran at once. */
export interface SchedulerOutput {
  readonly results: readonly ToolResult[];
  readonly cancelled: boolean;
  readonly maxRunning: number;
}

/** What the scheduler hears: calls as they arrive, the end of the input, a cancel, and its calls finishing. */
export type SchedulerEvent =
  | { type: 'CALL.ADD'; request: ToolCallRequest }
  /** Several calls that arrived together, in the model's order: one event (and one pump) for all. */
  | { type: 'CALL.ADD'; requests: readonly ToolCallRequest[] }
  /** No more calls. `finishReason: 'length'` means the message was cut off: not-started calls get TRUNCATED_CALL. */
  | { type: 'INPUT.END'; finishReason?: string; error?: string }
  | { type: 'CANCEL'; reason?: string }
  | { type: `xstate.done.actor.${string}`; output: ToolResult; actorId: string }
  | { type: `xstate.error.actor.${string}`; error: unknown; actorId: string };

const CHILD_PREFIX = 'call-';

/** The id of a running call's actor: `call-<index>`, reused by the same index in every step (see below). */
export const callActorId = (index: number): `call-${number}` => `${CHILD_PREFIX}${index}`;

function synthetic(ctx: SchedulerContext, e: BatchEntry, code: ErrorCode, message: string): ToolResult {
  return ctx.pipeline.finalize(e.request, e.prepared.ok ? e.prepared.prepared : undefined, {
    ok: false,
    error: { name: errorNameFor(code), code, message },
  }, undefined);
}

/**
 * What one event does to the batch: the gate's edit, the calls to start and the finished call
 * actors to stop. Applied by `apply` as one context update, then the children's stops and spawns.
 */
interface Change {
  readonly edit: GateEdit;
  readonly start: BatchEntry[];
  readonly stop: number[];
  inputClosed: boolean;
  cancelled: boolean;
}

// Stryker disable next-line ArrayDeclaration: killed when applied by hand (a bogus entry spawns a call with no request and the scheduler fails: 9 tests of test/machines/scheduler.test.ts fail), but Stryker counts this mutant static (other tests' leftover work runs `begin` between tests) and reports it Survived with every covering test passing
const begin = (ctx: SchedulerContext): Change => ({ edit: new GateEdit(ctx.gate), start: [], stop: [], inputClosed: ctx.inputClosed, cancelled: ctx.cancelled });

function addCall(ctx: SchedulerContext, ch: Change, request: ToolCallRequest): void {
  const index = ch.edit.size;
  const prepared = ctx.pipeline.prepare(request, { index, turnId: ctx.turnId, stepIndex: ctx.stepIndex });
  // The tool/call event is in the log before the call can be dispatched (SPEC §1).
  const seq = logCall(ctx.log, { index, turnId: ctx.turnId, stepIndex: ctx.stepIndex }, request, prepared);
  const { entry, duplicate } = ch.edit.add(request, prepared, seq);
  if (duplicate) {
    ch.edit.settle(index, synthetic(ctx, entry, ErrorCode.DUPLICATE_CALL_ID, `callId "${request.callId}" is used by an earlier call of this step; this call did not run`));
  } else if (ch.cancelled) {
    ch.edit.settle(index, synthetic(ctx, entry, ErrorCode.ABORTED_BEFORE_DISPATCH, 'cancelled before the call was dispatched'));
  }
}

/** The calls of a `CALL.ADD` (the only event the machine routes to `add`), in order. */
function addCalls(ctx: SchedulerContext, ch: Change, event: Extract<SchedulerEvent, { type: 'CALL.ADD' }>): void {
  if ('requests' in event) for (const request of event.requests) addCall(ctx, ch, request);
  else addCall(ctx, ch, event.request);
}

function commit(ctx: SchedulerContext, ch: Change): void {
  for (const e of ch.edit.takeCommittable()) logResult(ctx.log, ctx, e.callSeq, e.result!);
}

/** Settles every call that has not started with the given code, in array order. */
function settleQueued(ctx: SchedulerContext, ch: Change, code: ErrorCode, message: string): void {
  for (const e of ch.edit.queued()) ch.edit.settle(e.index, synthetic(ctx, e, code, message));
}

/** Commits what is ready, then marks for starting every call the plan allows now. */
function pump(ctx: SchedulerContext, ch: Change): void {
  commit(ctx, ch);
  // Stryker disable next-line ConditionalExpression: every call of a cancelled batch was settled as it was added, so nothing would start anyway; the return says so
  if (ch.cancelled) return;
  for (let e = ch.edit.nextToStart(ch.inputClosed); e; e = ch.edit.nextToStart(ch.inputClosed)) {
    ch.edit.markRunning(e);
    ch.start.push(e);
  }
}

/**
 * The index of the call whose actor sent a `xstate.done.actor.call-<i>` / `xstate.error.actor.call-<i>`
 * event: the machine routes only those here, and its only children are its calls.
 */
function indexOfChild(event: SchedulerEvent): number {
  return Number((event as { actorId: string }).actorId.slice(CHILD_PREFIX.length));
}

/** A call's actor finished: its result settles the call, and the actor leaves the scheduler's children. */
function settleChild(ch: Change, event: SchedulerEvent): void {
  const index = indexOfChild(event);
  ch.edit.settle(index, (event as { output: ToolResult }).output);
  ch.stop.push(index);
}

/** A call actor that crashed still answers its call: TOOL_FAILED, so no tool/call is left unpaired. */
function settleCrashedChild(ctx: SchedulerContext, ch: Change, event: SchedulerEvent): void {
  const index = indexOfChild(event);
  ch.edit.settle(index, synthetic(ctx, ch.edit.entry(index)!, ErrorCode.TOOL_FAILED, `the call machine failed: ${String((event as { error: unknown }).error)}`));
  ch.stop.push(index);
}

/**
 * The pieces of one event's work, in the order they run. Each action below is one `enqueueActions`:
 * one context update (a new gate) for the whole event, then the finished children's `stopChild` and
 * the new calls' `spawnChild`, which XState starts, in call order, once the macrostep ends.
 */
type Work = (ctx: SchedulerContext, ch: Change, event: SchedulerEvent) => void;

/** Why the input ended early, if it did (an `INPUT.END`, the only event routed to `cutOff`): the calls not started get this code. */
function cutOffOf(event: Extract<SchedulerEvent, { type: 'INPUT.END' }>): { code: ErrorCode; message: string } | undefined {
  if (event.finishReason === 'length') {
    return {
      code: ErrorCode.TRUNCATED_CALL,
      message: 'the model hit its output-token limit, so the arguments of this call may be cut off; it did not run. Re-issue the call with complete arguments.',
    };
  }
  return event.error !== undefined ? { code: ErrorCode.ABORTED_BEFORE_DISPATCH, message: `the model's response failed before this call was dispatched: ${event.error}` } : undefined;
}

const works = {
  add: ((ctx, ch, event) => addCalls(ctx, ch, event as Extract<SchedulerEvent, { type: 'CALL.ADD' }>)) as Work,
  pump: ((ctx, ch) => pump(ctx, ch)) as Work,
  commit: ((ctx, ch) => commit(ctx, ch)) as Work,
  settle: ((_ctx, ch, event) => settleChild(ch, event)) as Work,
  crashed: ((ctx, ch, event) => settleCrashedChild(ctx, ch, event)) as Work,
  closeInput: ((_ctx, ch) => {
    ch.inputClosed = true;
  }) as Work,
  cutOff: ((ctx, ch, event) => {
    const cutOff = cutOffOf(event as Extract<SchedulerEvent, { type: 'INPUT.END' }>);
    if (cutOff) settleQueued(ctx, ch, cutOff.code, cutOff.message);
  }) as Work,
  drain: ((ctx, ch) => settleQueued(ctx, ch, ErrorCode.ABORTED_BEFORE_DISPATCH, 'cancelled before the call was dispatched')) as Work,
};

/** One event's work as one action: see `Work`. */
function batchAction(...pieces: ReadonlyArray<keyof typeof works>) {
  return enqueueActions<SchedulerContext, SchedulerEvent, undefined, SchedulerEvent, CallActorLogic, never, never, never, never>(({ context, event, enqueue }) => {
    const ch = begin(context);
    for (const piece of pieces) works[piece](context, ch, event);
    const gate = ch.edit.done();
    // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: assigning the values the context already holds is the same state (only a context copy is saved)
    if (gate !== context.gate || ch.inputClosed !== context.inputClosed) enqueue.assign({ gate, inputClosed: ch.inputClosed });
    for (const index of ch.stop) enqueue.stopChild(callActorId(index));
    for (const e of ch.start) {
      const input: ToolCallInput = {
        request: e.request,
        where: { index: e.index, turnId: context.turnId, stepIndex: context.stepIndex },
        pipeline: context.pipeline,
        prepared: e.prepared,
      };
      enqueue.spawnChild('toolCall', { id: callActorId(e.index), input });
    }
  });
}

/** The scheduler's one kind of child, as `setup({ actors })` declares it. */
type CallActorLogic = { src: 'toolCall'; logic: typeof toolCallMachine; id: string | undefined };

/** Runs one step's calls: concurrency-safe calls in parallel groups (at most `concurrency` at once), exclusive calls alone, and commits their results in the model's order. */
export const schedulerMachine = setup({
  types: {
    context: {} as SchedulerContext,
    input: {} as SchedulerInput,
    events: {} as SchedulerEvent,
    output: {} as SchedulerOutput,
  },
  actors: { toolCall: toolCallMachine },
  actions: {
    /** Commits what is ready, then starts every call the plan allows now. */
    pump: batchAction('pump'),
    /** `CALL.ADD`: logs the calls (`tool/call` before any can run), then pumps. */
    addAndPump: batchAction('add', 'pump'),
    /** `INPUT.END`: the batch is complete; under a cut-off the calls not started settle with its code; then pumps. */
    closeAndPump: batchAction('closeInput', 'cutOff', 'pump'),
    /** A call finished: record its result, stop its actor, then pump. */
    settleAndPump: batchAction('settle', 'pump'),
    /** A call actor crashed: its call settles TOOL_FAILED (no tool/call left unpaired), then pump. */
    settleCrashedAndPump: batchAction('crashed', 'pump'),
    /** While cancelling: a finished call is recorded and committed in order; nothing new starts. */
    settleAndCommit: batchAction('settle', 'commit'),
    settleCrashedAndCommit: batchAction('crashed', 'commit'),
    addAndCommit: batchAction('add', 'commit'),
    closeInput: batchAction('closeInput'),
    /** The calls not started get ABORTED_BEFORE_DISPATCH; everything settled is committed in order. */
    drainAndCommit: batchAction('drain', 'commit'),
    /** `CANCEL`: nothing new starts; every running call is told to cancel. */
    cancelRunning: enqueueActions(({ context, event, enqueue }) => {
      enqueue.assign({ cancelled: true });
      const { reason } = event as Extract<SchedulerEvent, { type: 'CANCEL' }>;
      for (const e of context.gate.entries) {
        if (e.status === 'running') enqueue.sendTo(callActorId(e.index), { type: 'CANCEL', reason });
      }
    }),
  },
  guards: {
    finished: ({ context }) => context.inputClosed && allCommitted(context.gate),
    /** Every started call has settled (after a cancel). */
    nothingRunning: ({ context }) => context.gate.running === 0,
  },
}).createMachine({
  id: 'scheduler',
  context: ({ input, self }) => {
    // Stopped from outside (its turn suspended, its step crashed), XState stops the running calls
    // without their exit actions: each lets go of its body, approval and deadline here. One
    // observer per scheduler: the children of its last snapshot are the calls that were running.
    let last: SchedulerSnapshot | undefined;
    self.subscribe({
      next: (s) => (last = s as SchedulerSnapshot),
      complete: () => {
        // Stryker disable next-line ConditionalExpression,LogicalOperator: a scheduler that finished has no call left among its children, so there is nothing to let go of either way
        if (self.getSnapshot().status !== 'stopped' || !last) return;
        // Every child of a stopped scheduler was stopped with it.
        for (const child of Object.values(last.children)) releaseStoppedCall(child!.getSnapshot().context, 'the scheduler was stopped');
      },
      error: () => {},
    });
    const ctx: SchedulerContext = {
      pipeline: input.pipeline,
      log: input.log,
      turnId: input.turnId,
      stepIndex: input.stepIndex,
      gate: emptyGate(input.concurrency ?? 8),
      inputClosed: input.complete === true,
      cancelled: input.cancelled === true,
    };
    if (!input.calls?.length) return ctx;
    // Calls known up front are logged and entered now; the entry `pump` starts them.
    const ch = begin(ctx);
    for (const request of input.calls) addCall(ctx, ch, request);
    return { ...ctx, gate: ch.edit.done() };
  },
  initial: 'running',
  states: {
    running: {
      // Drawn as a note in the generated diagrams (the commit gate is a value in context, not states).
      description: [
        'commit gate: each call is queued → running → settled → committed',
        'CALL.ADD: tool/call logged before the call can start',
        'starts in order: parallel calls up to the limit, an exclusive call alone',
        'done: call-i settles call i; tool/result i is committed',
        'only when calls 0..i-1 are committed (strict call order)',
      ].join('\n'),
      entry: 'pump',
      always: { guard: 'finished', target: 'done' },
      on: {
        'CALL.ADD': { actions: 'addAndPump' },
        'INPUT.END': { actions: 'closeAndPump' },
        CANCEL: { target: 'cancelling', actions: 'cancelRunning' },
        'xstate.done.actor.*': { actions: 'settleAndPump' },
        'xstate.error.actor.*': { actions: 'settleCrashedAndPump' },
      },
    },
    /** Started calls settle first; then the rest get ABORTED_BEFORE_DISPATCH, in order. */
    cancelling: {
      description: ['CANCEL sent to every running call', 'their results still commit in call order'].join('\n'),
      always: { guard: 'nothingRunning', target: 'drained' },
      on: {
        'xstate.done.actor.*': { actions: 'settleAndCommit' },
        'xstate.error.actor.*': { actions: 'settleCrashedAndCommit' },
        'CALL.ADD': { actions: 'addAndCommit' },
        'INPUT.END': { actions: 'closeInput' },
      },
    },
    drained: {
      description: 'calls not started: ABORTED_BEFORE_DISPATCH, committed in call order',
      entry: 'drainAndCommit',
      always: { guard: 'finished', target: 'done' },
      on: {
        'CALL.ADD': { actions: 'addAndCommit' },
        'INPUT.END': { actions: 'closeInput' },
      },
    },
    done: { type: 'final' },
  },
  output: ({ context }) => ({
    results: context.gate.entries.map((e) => e.result!),
    cancelled: context.cancelled,
    maxRunning: context.gate.maxRunning,
  }),
});

export type SchedulerActor = ActorRefFrom<typeof schedulerMachine>;
type SchedulerSnapshot = SnapshotFrom<typeof schedulerMachine>;
/** A running call's actor, as the scheduler spawned it (`call-<index>`). */
export type ToolCallActor = ActorRefFrom<typeof toolCallMachine>;

/** One call of a step, in the model's order, as a UI lists it (see `callsOf`). */
export interface StepCall {
  /** Position in the model's order (0-based). */
  readonly index: number;
  readonly request: ToolCallRequest;
  /** `queued` → `running` → `settled` (its result known) → `committed` (its `tool/result` logged, in call order). */
  readonly status: EntryStatus;
  /** The call's result once it settled; undefined before. */
  readonly result: ToolResult | undefined;
  /**
   * The call's live actor while it runs (`status: 'running'`): its snapshot's value is the call's
   * stage (`awaitingApproval`, `executing`, …). Undefined before it starts and once it settled (a
   * finished call actor is stopped, so live actors stay within the concurrency limit).
   */
  readonly actor: ToolCallActor | undefined;
}

const callsCache = new WeakMap<object, readonly StepCall[]>();

/**
 * A step's calls, in the model's order, each with its live actor while it runs: read from a
 * scheduler snapshot (its commit gate and its `call-<index>` children), typed, with no reach into
 * internals. The same snapshot gives the same (frozen) array, so a selector over it is stable.
 */
export function callsOf(snapshot: SchedulerSnapshot): readonly StepCall[] {
  const cached = callsCache.get(snapshot);
  if (cached) return cached;
  const children = snapshot.children;
  const calls = Object.freeze(
    snapshot.context.gate.entries.map((e) =>
      Object.freeze({
        index: e.index,
        request: e.request,
        status: e.status,
        result: e.result,
        // Only a running call has a child: one is spawned as it starts and stopped as it settles.
        actor: children[callActorId(e.index)],
      }),
    ),
  );
  callsCache.set(snapshot, calls);
  return calls;
}
