/**
 * Runs one step's tool calls (SPEC §3): calls arrive in the model's order (`CALL.ADD`, possibly
 * while the model still streams), each gets its `tool/call` event before anything runs, safe calls
 * run in parallel groups bounded by `concurrency`, exclusive calls run alone, and results are
 * committed (`tool/result`) strictly in array order, each as soon as all earlier ones settled.
 *
 * One toolCall actor per running call, with the id `call-<index>`, created with the scheduler as
 * its parent (see `pump`); a finished one stops itself, so live call actors stay within the limit.
 */
import { createActor, enqueueActions, setup, type ActorRefFrom, type AnyActorRef } from 'xstate';
import { ErrorCode, errorNameFor, type NewLogEvent, type ToolCallRequest, type ToolResult } from '../src/protocol/index.js';
import type { CallStages } from './callStages.js';
import { CommitGate, plannedMode, type BatchEntry } from './commitGate.js';
import { toolCallMachine, type ToolCallContext, type ToolCallInput } from './toolCall.js';

/** The part of the session log the machines need: append, get the stamped seq back. */
export interface LogPort {
  append(event: NewLogEvent): { readonly seq: number };
}

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

export interface SchedulerContext {
  readonly pipeline: CallStages;
  readonly log: LogPort;
  readonly turnId: string | undefined;
  readonly stepIndex: number | undefined;
  readonly gate: CommitGate;
  readonly inputClosed: boolean;
  readonly cancelled: boolean;
  /** Why the input ended early, if it did: not-started calls get this code. */
  readonly cutOff: { code: ErrorCode; message: string } | undefined;
}

export interface SchedulerOutput {
  readonly results: readonly ToolResult[];
  readonly cancelled: boolean;
  readonly maxRunning: number;
}

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

function synthetic(ctx: SchedulerContext, e: BatchEntry, code: ErrorCode, message: string): ToolResult {
  return ctx.pipeline.finalize(e.request, e.prepared.ok ? e.prepared.prepared : undefined, {
    ok: false,
    error: { name: errorNameFor(code), code, message },
  }, undefined);
}

function addCall(ctx: SchedulerContext, request: ToolCallRequest): void {
  const gate = ctx.gate;
  const index = gate.entries.length;
  const prepared = ctx.pipeline.prepare(request, { index, turnId: ctx.turnId, stepIndex: ctx.stepIndex });
  // The tool/call event is in the log before the call can be dispatched (SPEC §1).
  const { seq } = ctx.log.append({
    type: 'tool/call',
    turnId: ctx.turnId,
    stepIndex: ctx.stepIndex,
    callId: request.callId,
    toolName: request.toolName,
    input: request.input,
    index,
    executionMode: plannedMode(prepared),
  });
  const { entry, duplicate } = gate.add(request, prepared, seq);
  if (duplicate) {
    gate.settle(index, synthetic(ctx, entry, ErrorCode.DUPLICATE_CALL_ID, `callId "${request.callId}" is used by an earlier call of this step; this call did not run`));
  } else if (ctx.cancelled) {
    gate.settle(index, synthetic(ctx, entry, ErrorCode.ABORTED_BEFORE_DISPATCH, 'cancelled before the call was dispatched'));
  }
}

/** The calls of a `CALL.ADD`, in order. */
function addCalls(ctx: SchedulerContext, event: Extract<SchedulerEvent, { type: 'CALL.ADD' }>): void {
  if ('requests' in event) for (const request of event.requests) addCall(ctx, request);
  else addCall(ctx, event.request);
}

function commit(ctx: SchedulerContext): void {
  for (const e of ctx.gate.takeCommittable()) {
    ctx.log.append({
      type: 'tool/result',
      turnId: ctx.turnId,
      stepIndex: ctx.stepIndex,
      callId: e.request.callId,
      toolName: e.result!.toolName,
      sourceEventSeqs: [e.callSeq],
      result: e.result!,
    });
  }
}

/** Settles every call that has not started with the given code, in array order. */
function settleQueued(ctx: SchedulerContext, code: ErrorCode, message: string): void {
  for (const e of ctx.gate.queued()) ctx.gate.settle(e.index, synthetic(ctx, e, code, message));
}

/**
 * Commits what is ready, then creates an actor for every call the plan allows now. The actors are
 * created with the scheduler as their parent (one system: the same clock, and XState's inspection
 * sees every call, costing nothing when nobody inspects) but not through `spawnChild`: they are
 * not kept in the scheduler's snapshot, so starting one copies no `children` object and a finished
 * one needs no `stopChild` (a done actor stops itself). Each reports its end to the scheduler as
 * XState's `xstate.done.actor.call-<index>` event. They start when this macrostep ends (see
 * `startCalls`), as `spawnChild` would start them.
 */
function pump(context: SchedulerContext, self: AnyActorRef): void {
  commit(context);
  if (context.cancelled) return;
  const gate = context.gate;
  for (let e = gate.nextToStart(context.inputClosed); e; e = gate.nextToStart(context.inputClosed)) {
    gate.markRunning(e);
    const input: ToolCallInput = {
      request: e.request,
      where: { index: e.index, turnId: context.turnId, stepIndex: context.stepIndex },
      pipeline: context.pipeline,
      prepared: e.prepared,
    };
    const actor = createActor(toolCallMachine, { id: `${CHILD_PREFIX}${e.index}`, parent: self, input });
    e.actor = actor;
    gate.toStart.push(actor);
  }
}

/**
 * Starts the call actors the last pump created, in call order. It runs as an observer of the
 * scheduler, i.e. once the macrostep that created them has ended, outside any action (XState
 * warns about built-in actions run inside a custom one, and a call's own macrostep has them), as
 * `spawnChild` starts its children. (The model-based path tests run the machine without an actor,
 * so, as with `spawnChild`, the calls are created there and never started.)
 */
function startCalls(gate: CommitGate): void {
  const list = gate.toStart;
  if (list.length === 0) return;
  const actors = list.splice(0, list.length);
  for (const a of actors) a.start();
}

/**
 * The scheduler was stopped from outside (its turn stopped: a suspended turn, a crashed step):
 * its call actors are not XState children (see `pump`), so they are stopped here, their bodies
 * aborted, and with them their timers (an approval's timeout would otherwise keep a process alive).
 */
function stopCalls(gate: CommitGate): void {
  gate.toStart.length = 0;
  for (const e of gate.entries) {
    const actor = e.actor as (AnyActorRef & { _stop?: () => void }) | undefined;
    if (!actor || actor.getSnapshot().status !== 'active') continue;
    const context = (actor.getSnapshot() as { context?: Partial<Pick<ToolCallContext, 'abort' | 'approvalAbort' | 'deadline'>> }).context;
    context?.approvalAbort?.abort('the scheduler was stopped');
    context?.abort?.abort('the scheduler was stopped');
    // A stopped actor runs no exit actions: its per-call deadline timer is disarmed here.
    context?.deadline?.disarm?.();
    // A non-root actor cannot be stopped with `stop()`; `_stop` is what XState's own stopChild uses.
    actor._stop?.();
  }
}

/** Records a finished call's result (its actor stopped itself when it reached its final state). */
function settleChild(context: SchedulerContext, event: SchedulerEvent): void {
  if (!event.type.startsWith('xstate.done.actor.')) return;
  const e = event as { actorId: string; output: ToolResult };
  context.gate.settle(Number(e.actorId.slice(CHILD_PREFIX.length)), e.output);
}

export const schedulerMachine = setup({
  types: {
    context: {} as SchedulerContext,
    input: {} as SchedulerInput,
    events: {} as SchedulerEvent,
    output: {} as SchedulerOutput,
  },
  actions: {
    // Resolved with the transition (enqueueActions), not run as custom actions: creating a call
    // actor runs its initial macrostep, whose built-in actions XState would warn about in a custom one.
    /** Commits what is ready, then creates an actor for every call the plan allows now. */
    pump: enqueueActions(({ context, self }) => pump(context, self)),
    /** `CALL.ADD`: logs the call (`tool/call` before it can run), then pumps, in one action. */
    addAndPump: enqueueActions(({ context, event, self }) => {
      if (event.type === 'CALL.ADD') addCalls(context, event);
      pump(context, self);
    }),
    /** A call finished: record its result, then pump, in one action. */
    settleAndPump: enqueueActions(({ context, event, self }) => {
      settleChild(context, event);
      pump(context, self);
    }),
    settleChild: ({ context, event }) => settleChild(context, event),
    /** A call actor that crashed still answers its call: TOOL_FAILED, so no tool/call is left unpaired. */
    settleCrashedChild: ({ context, event }) => {
      const e = event as unknown as { actorId: string; error: unknown };
      const index = Number(e.actorId.slice(CHILD_PREFIX.length));
      const entry = context.gate.entries[index];
      if (entry) context.gate.settle(index, synthetic(context, entry, ErrorCode.TOOL_FAILED, `the call machine failed: ${String(e.error)}`));
    },
  },
  guards: {
    finished: ({ context }) => context.inputClosed && context.gate.allCommitted,
    /** Every started call has settled (after a cancel). */
    nothingRunning: ({ context }) => context.gate.running === 0,
  },
}).createMachine({
  id: 'scheduler',
  context: ({ input, self }) => {
    const gate = new CommitGate(input.concurrency ?? 8);
    // Call actors created in a macrostep start when it ends (see startCalls).
    self.subscribe({ next: () => startCalls(gate), error: () => {}, complete: () => stopCalls(gate) });
    const ctx: SchedulerContext = {
      pipeline: input.pipeline,
      log: input.log,
      turnId: input.turnId,
      stepIndex: input.stepIndex,
      gate,
      inputClosed: input.complete === true,
      cancelled: input.cancelled === true,
      cutOff: undefined,
    };
    for (const request of input.calls ?? []) addCall(ctx, request);
    return ctx;
  },
  initial: 'running',
  states: {
    running: {
      // Drawn as a note in the generated diagrams (the commit gate is a plain object, not states).
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
        'INPUT.END': {
          actions: [
            enqueueActions(({ context, event, enqueue }) => {
              const cutOff =
                event.finishReason === 'length'
                  ? {
                      code: ErrorCode.TRUNCATED_CALL,
                      message:
                        'the model hit its output-token limit, so the arguments of this call may be cut off; it did not run. Re-issue the call with complete arguments.',
                    }
                  : event.error !== undefined
                    ? { code: ErrorCode.ABORTED_BEFORE_DISPATCH, message: `the model's response failed before this call was dispatched: ${event.error}` }
                    : undefined;
              enqueue.assign({ inputClosed: true, cutOff });
              if (cutOff) settleQueued(context, cutOff.code, cutOff.message);
            }),
            'pump',
          ],
        },
        CANCEL: {
          target: 'cancelling',
          actions: enqueueActions(({ context, event, enqueue }) => {
            enqueue.assign({ cancelled: true });
            for (const e of context.gate.runningEntries()) {
              if (e.actor) enqueue.sendTo(e.actor, { type: 'CANCEL', reason: event.reason });
            }
          }),
        },
        'xstate.done.actor.*': { actions: 'settleAndPump' },
        'xstate.error.actor.*': { actions: ['settleCrashedChild', 'pump'] },
      },
    },
    /** Started calls settle first; then the rest get ABORTED_BEFORE_DISPATCH, in order. */
    cancelling: {
      description: ['CANCEL sent to every running call', 'their results still commit in call order'].join('\n'),
      always: { guard: 'nothingRunning', target: 'drained' },
      on: {
        'xstate.done.actor.*': { actions: ['settleChild', ({ context }) => commit(context)] },
        'xstate.error.actor.*': { actions: ['settleCrashedChild', ({ context }) => commit(context)] },
        'CALL.ADD': { actions: [({ context, event }) => addCalls(context, event), ({ context }) => commit(context)] },
        'INPUT.END': { actions: enqueueActions(({ enqueue }) => enqueue.assign({ inputClosed: true })) },
      },
    },
    drained: {
      description: 'calls not started: ABORTED_BEFORE_DISPATCH, committed in call order',
      entry: ({ context }) => {
        settleQueued(context, ErrorCode.ABORTED_BEFORE_DISPATCH, 'cancelled before the call was dispatched');
        commit(context);
      },
      always: { guard: 'finished', target: 'done' },
      on: {
        'CALL.ADD': { actions: [({ context, event }) => addCalls(context, event), ({ context }) => commit(context)] },
        'INPUT.END': { actions: enqueueActions(({ enqueue }) => enqueue.assign({ inputClosed: true })) },
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
