/**
 * The scheduler machine as a graph: the real `schedulerMachine` with a scripted pipeline and log,
 * its toolCall actors created but never started (their done events are events of the graph),
 * and an event generator that speaks the scheduler's protocol: calls arrive (`CALL.ADD`: a safe
 * call, an exclusive one, one with invalid arguments, one repeating an earlier callId) until the
 * input ends (`INPUT.END`: normally, cut off by the token limit, or with a model error), the
 * caller may cancel at any time, and a running call may finish at any time (with its body's value,
 * or `ABORTED` when it finishes after the cancel), or crash (its actor fails: a broken port). A child that is
 * already final when spawned (invalid arguments) reports first: its done event is the only
 * event offered, as in an actor, where it arrives before anything sent afterwards.
 */
import { getNextTransitions, type AnyEventObject, type AnyMachineSnapshot } from 'xstate';
import type { CallStages } from '../../machines/callStages.js';
import type { LogPort } from '../../machines/commitGate.js';
import { schedulerMachine, type SchedulerContext, type SchedulerInput } from '../../machines/scheduler.js';
import { ErrorCode, errorNameFor, type NewLogEvent, type ToolCallRequest, type ToolResult } from '../../src/protocol/index.js';
import { enumerateConfigs, exploreGraph, planPaths, type Dimensions, type GraphModel, type Plan } from '../../src/testing/paths/planner.js';

export type CallKind = 'safe' | 'exclusive' | 'invalid' | 'duplicate';

export interface SchedulerConfig {
  /** How the batch begins: streamed (calls arrive as events), complete up front, or already cancelled. */
  readonly start: 'streaming' | 'batch' | 'cancelled';
}

export const schedulerDims: Dimensions<SchedulerConfig> = { start: ['streaming', 'batch', 'cancelled'] };

/**
 * Streamed batches: at most two calls with a concurrency limit of one (enough for a call to wait
 * for the limit, or for an exclusive call to wait for a safe one; three calls make the graph ten
 * times larger without a new branch). The complete batch runs three calls under a limit of two.
 */
export const MAX_STREAMED_CALLS = 2;
export const concurrencyFor = (start: SchedulerConfig['start']) => (start === 'streaming' ? 1 : 2);

export function requestFor(kind: CallKind, index: number): ToolCallRequest {
  return {
    callId: kind === 'duplicate' ? 'c0' : `c${index}`,
    toolName: kind === 'exclusive' ? 'exclusive' : 'safe',
    input: kind === 'invalid' ? '{"n":"one"}' : '{"n":1}',
  };
}

export const batchCalls: Readonly<Record<Exclude<SchedulerConfig['start'], 'streaming'>, readonly CallKind[]>> = {
  batch: ['safe', 'safe', 'exclusive'],
  cancelled: ['safe', 'invalid'],
};

export function kindOfRequest(r: ToolCallRequest, index: number): CallKind {
  if (index > 0 && r.callId === 'c0') return 'duplicate';
  if (r.input !== '{"n":1}') return 'invalid';
  return r.toolName === 'exclusive' ? 'exclusive' : 'safe';
}

/** A pipeline whose children go straight to their body (no listeners) and never finish on their own. */
export function scriptedSchedulerPipeline(): CallStages {
  return {
    limits: { hookTimeoutMs: 100, approvalTimeoutMs: 200, abortGraceMs: 50, callTimeoutMs: 1_000 },
    now: () => 0,
    prepare: (request, where) =>
      request.input === '{"n":1}'
        ? {
            ok: true,
            prepared: {
              view: { callId: request.callId, toolName: request.toolName, args: { n: 1 }, rawInput: request.input, index: where.index, executionMode: request.toolName === 'exclusive' ? 'exclusive' : 'parallel', idempotent: false },
              tool: {},
            },
          }
        : { ok: false, error: { name: 'InvalidArgsError', code: ErrorCode.INVALID_ARGS, message: 'n: expected number' } },
    hasPreExecute: () => false,
    hasGuards: () => false,
    planPostExecute: () => ({ kind: 'skip' }),
    preExecute: () => ({ kind: 'allow' }),
    isApprovalRemembered: () => false,
    rememberApproval: () => {},
    requestApproval: () => new Promise(() => {}),
    guard: () => undefined,
    execute: () => new Promise(() => {}),
    draftFromValue: (_p, value) => ({ ok: true, draft: { value, content: String(value), metadata: {} } }),
    postExecute: (_p, draft) => ({ kind: 'accepted', draft }),
    finalize: (request, _p, s) =>
      ({ callId: request.callId, toolName: request.toolName, isError: !s.ok, ...(s.ok ? {} : { error: s.error }), content: s.ok ? s.draft.content : '', metadata: {} }) as ToolResult,
    record: () => {},
    isMetered: () => false,
  };
}

/** The log as a path pins it down: `tool/call c1 parallel` (with its planned mode, §8.14), `tool/result c1 ABORTED`. */
export function describeSchedulerLogEvent(e: NewLogEvent): string | undefined {
  if (e.type === 'tool/call') return `tool/call ${e.callId} ${e.executionMode}`;
  if (e.type === 'tool/result') return `tool/result ${e.callId} ${e.result.error?.code ?? 'ok'}`;
  return undefined;
}

export function scriptedLog(recorded?: string[]): LogPort {
  let seq = 0;
  return {
    append(event) {
      const d = describeSchedulerLogEvent(event);
      if (d && recorded) recorded.push(d);
      return { seq: ++seq };
    },
  };
}

export function schedulerInput(config: SchedulerConfig, pipeline: CallStages, log: LogPort): SchedulerInput {
  const calls = config.start === 'streaming' ? [] : batchCalls[config.start].map(requestFor);
  return { pipeline, log, concurrency: concurrencyFor(config.start), calls, complete: config.start !== 'streaming', cancelled: config.start === 'cancelled' };
}

const ctx = (s: AnyMachineSnapshot) => s.context as SchedulerContext;

/**
 * What a call actor outputs when its body settles. A body that returns after the caller's cancel
 * (it ignored its signal) settles its call ABORTED and its value is discarded (SPEC §3, §8.9; the
 * toolCall machine's `executing.aborting: EXECUTED → finalizing`); before the cancel it keeps its value.
 */
export function doneResult(r: ToolCallRequest, cancelled: boolean): ToolResult {
  if (!cancelled) return { callId: r.callId, toolName: r.toolName, isError: false, content: 'done', metadata: {} };
  const message = 'cancelled; the tool body returned after the cancel and its result was discarded';
  return { callId: r.callId, toolName: r.toolName, isError: true, error: { name: errorNameFor(ErrorCode.ABORTED), code: ErrorCode.ABORTED, message }, content: '', metadata: {} };
}

/** Children already final (spawned with invalid arguments) whose done event has not arrived yet. */
export function finishedChildren(s: AnyMachineSnapshot): AnyEventObject[] {
  return ctx(s)
    .gate.entries.filter((e) => e.status === 'running')
    .flatMap((e) => {
      const snap = (s.children as Record<string, { getSnapshot(): AnyMachineSnapshot } | undefined>)[`call-${e.index}`]?.getSnapshot();
      return snap?.status === 'done' ? [{ type: `xstate.done.actor.call-${e.index}`, actorId: `call-${e.index}`, output: snap.output }] : [];
    });
}

function listens(s: AnyMachineSnapshot, type: string): boolean {
  return getNextTransitions(s).some((t) => t.eventType === type || (t.eventType.endsWith('.*') && type.startsWith(t.eventType.slice(0, -1))));
}

export function schedulerEvents(s: AnyMachineSnapshot): AnyEventObject[] {
  if (s.status !== 'active') return [];
  const forced = finishedChildren(s);
  if (forced.length) return forced.slice(0, 1);
  const c = ctx(s);
  const n = c.gate.entries.length;
  const events: AnyEventObject[] = [];
  if (!c.inputClosed) {
    if (n < MAX_STREAMED_CALLS) {
      for (const kind of ['safe', 'exclusive', 'invalid', 'duplicate'] as const) {
        if (kind !== 'duplicate' || n > 0) events.push({ type: 'CALL.ADD', request: requestFor(kind, n), kind });
      }
    }
    events.push({ type: 'INPUT.END', finishReason: 'tool-calls' });
    events.push({ type: 'INPUT.END', finishReason: 'length' });
    events.push({ type: 'INPUT.END', finishReason: 'error', error: 'the stream broke' });
  }
  if (!c.cancelled) events.push({ type: 'CANCEL', reason: 'user pressed stop' });
  for (const e of c.gate.entries) {
    if (e.status !== 'running') continue;
    // Nothing starts after a cancel, so a call running while the scheduler is cancelled was running
    // at the cancel: its body's value, arriving now, is discarded and the call ends ABORTED.
    events.push({ type: `xstate.done.actor.call-${e.index}`, actorId: `call-${e.index}`, output: doneResult(e.request, c.cancelled) });
    // The call actor itself fails (a broken port), before or after a cancel: the scheduler still answers the call.
    events.push({ type: `xstate.error.actor.call-${e.index}`, actorId: `call-${e.index}`, error: new Error('port exploded') });
  }
  return events.filter((e) => listens(s, e.type));
}

export function serializeScheduler(s: AnyMachineSnapshot): string {
  const c = ctx(s);
  // Settled entries keep their result code: a call that crashed and one that finished are different outcomes.
  const entries = c.gate.entries.map((e, i) => `${kindOfRequest(e.request, i)}:${e.status}${e.result ? `:${e.result.error?.code ?? 'ok'}` : ''}`).join(',');
  return `${JSON.stringify(s.value)} in=${c.inputClosed ? 'closed' : 'open'}${c.cancelled ? ' cancelled' : ''} [${entries}]`;
}

export function describeSchedulerEvent(e: AnyEventObject): string {
  if (e.type === 'CALL.ADD') return `CALL.ADD(${e.kind})`;
  if (e.type === 'INPUT.END') return `INPUT.END(${e.finishReason})`;
  if (e.type.startsWith('xstate.done.actor.')) return `done(${e.actorId})`;
  if (e.type.startsWith('xstate.error.actor.')) return `crashed(${e.actorId})`;
  return e.type;
}

export const schedulerGraph: GraphModel<SchedulerConfig> = {
  machine: schedulerMachine,
  input: (config) => schedulerInput(config, scriptedSchedulerPipeline(), scriptedLog()),
  events: (s) => schedulerEvents(s),
  serialize: serializeScheduler,
  describe: describeSchedulerEvent,
};

let cached: Plan<SchedulerConfig> | undefined;

/** Shortest paths of every start, simple paths of the already-complete and cancelled batches. */
export function planSchedulerPaths(): Plan<SchedulerConfig> {
  cached ??= planPaths(schedulerGraph, enumerateConfigs(schedulerDims, (c) => exploreGraph(schedulerGraph, c)), {
    simplePathsFor: (c) => c.config.start !== 'streaming',
  });
  return cached;
}
