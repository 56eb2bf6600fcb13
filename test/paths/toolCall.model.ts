/**
 * The toolCall machine as a graph: the real `toolCallMachine` driven by a scripted `CallStages`
 * whose answers are fixed per configuration, and an event generator that offers, in each state,
 * every event the state's transitions listen to (read from the machine with
 * `getNextTransitions`), with one payload per outcome the runtime can produce.
 */
import { getNextTransitions, type AnyEventObject, type AnyMachineSnapshot } from 'xstate';
import type { CallStages, PreExecuteOutcome, PostExecuteOutcome, ResultDraft, Settlement } from '../../machines/callStages.js';
import { toolCallMachine, type ToolCallContext, type ToolCallInput } from '../../machines/toolCall.js';
import { ApprovalAnswerSchema, ErrorCode, PreExecuteDecisionSchema, type NewLogEvent, type ToolResult } from '../../src/protocol/index.js';
import { enumerateConfigs, exploreGraph, planPaths, type ConfigClass, type Dimensions, type GraphModel, type Plan } from '../../src/testing/paths/planner.js';

/** One fixed answer per question the machine asks its port. */
export interface ToolCallConfig {
  /** `prepare()`: the call resolves to a tool with valid args, or not. */
  readonly prepare: 'ok' | 'unknown-tool' | 'invalid-args';
  /** `hasPreExecute()` / `preExecute()`: no listener, a listener that answers later, or one answering now. */
  readonly pre: 'pending' | 'none' | 'allow' | 'deny' | 'ask' | 'failed';
  /** `isApprovalRemembered()`: an earlier `allowed-always` for the same call. */
  readonly remembered: boolean;
  /** `hasGuards()` / `guard()`. */
  readonly guard: 'pass' | 'none' | 'deny' | 'failed';
  /** `planPostExecute()` / `postExecute()`. */
  readonly post: 'pending' | 'none' | 'accepted' | 'blocked' | 'invalid-output' | 'failed';
}

export const toolCallDims: Dimensions<ToolCallConfig> = {
  prepare: ['ok', 'unknown-tool', 'invalid-args'],
  pre: ['pending', 'none', 'allow', 'deny', 'ask', 'failed'],
  remembered: [false, true],
  guard: ['pass', 'none', 'deny', 'failed'],
  post: ['pending', 'none', 'accepted', 'blocked', 'invalid-output', 'failed'],
};

export const limits = { hookTimeoutMs: 100, approvalTimeoutMs: 200, abortGraceMs: 50, callTimeoutMs: 1_000 } as const;

const draft: ResultDraft = { value: 'done', content: 'done', metadata: {} };
const never = <T>() => new Promise<T>(() => {});

/** The pre-execute outcomes: the protocol's decisions, plus a listener that failed. */
export const preOutcomes: readonly PreExecuteOutcome[] = [
  ...PreExecuteDecisionSchema.options.map((o) => {
    const kind = o.shape.kind.value;
    return kind === 'deny' ? { kind, reason: 'not in plan mode' } : { kind };
  }),
  { kind: 'failed', hook: 'tools/pre-execute', listener: 'gate', message: 'Error: listener crashed' },
] as PreExecuteOutcome[];

export const postOutcomes: readonly PostExecuteOutcome[] = [
  { kind: 'accepted', draft },
  { kind: 'blocked', feedback: 'contains a secret', listener: 'review' },
  { kind: 'invalid-output', message: 'post-execute listener "review" replaced the value: not a string' },
  { kind: 'failed', hook: 'tools/post-execute', listener: 'review', message: 'Error: listener crashed' },
];

/** What the approval service can answer, plus `cancelled` (the service failed or was withdrawn). */
export const approvalAnswers = [...ApprovalAnswerSchema.options, 'cancelled'] as const;

export const settlements: readonly Settlement[] = [
  { ok: true, draft },
  { ok: false, error: { name: 'ToolFailedError', code: ErrorCode.TOOL_FAILED, message: 'Error: body failed' } },
];

/** Payloads per event type; an event type not listed here is offered bare (`{ type }`). */
const payloads: Readonly<Record<string, readonly object[]>> = {
  'PRE.DECIDED': preOutcomes.map((outcome) => ({ outcome })),
  'APPROVAL.ANSWERED': approvalAnswers.map((answer) => ({ answer })),
  EXECUTED: settlements.map((settlement) => ({ settlement })),
  'POST.DONE': postOutcomes.map((outcome) => ({ outcome })),
  CANCEL: [{ reason: 'user pressed stop' }],
};

/** The payloads at a state: a body's value comes with the post-execute plan of the call's pipeline, as `startBody` sends it. */
function payloadsAt(snapshot: AnyMachineSnapshot): Readonly<Record<string, readonly object[]>> {
  const { pipeline, prepareOutcome } = snapshot.context as ToolCallContext;
  if (!prepareOutcome.ok) return payloads;
  const withPlan = settlements.map((settlement) => (settlement.ok ? { settlement, post: pipeline.planPostExecute(prepareOutcome.prepared, settlement.draft) } : { settlement }));
  return { ...payloads, EXECUTED: withPlan };
}

function outcomeOf<T extends { kind: string }>(list: readonly T[], kind: string): T {
  return list.find((o) => o.kind === kind)!;
}

/** A `CallStages` that answers from `config` and records what the machine writes to the log. */
export function scriptedPipeline(config: ToolCallConfig, recorded: string[] = []): CallStages {
  const view = { callId: 'call-0', toolName: 'probe', args: { n: 1 }, rawInput: '{"n":1}', index: 0, executionMode: 'exclusive', idempotent: false } as const;
  return {
    limits,
    now: () => 0,
    prepare: () =>
      config.prepare === 'ok'
        ? { ok: true, prepared: { view, tool: {} } }
        : { ok: false, error: { name: 'x', code: config.prepare === 'unknown-tool' ? ErrorCode.UNKNOWN_TOOL : ErrorCode.INVALID_ARGS, message: config.prepare } },
    hasPreExecute: () => config.pre !== 'none',
    preExecute: () => (config.pre === 'pending' ? never() : outcomeOf(preOutcomes, config.pre)),
    isApprovalRemembered: () => config.remembered,
    rememberApproval: () => {},
    requestApproval: () => never(),
    hasGuards: () => config.guard !== 'none',
    guard: () =>
      config.guard === 'deny'
        ? { kind: 'deny', reason: 'never on Fridays', listener: 'fridays' }
        : config.guard === 'failed'
          ? { kind: 'failed', hook: 'tools/guard', listener: 'fridays', message: 'Error: guard crashed' }
          : undefined,
    execute: () => never(),
    draftFromValue: (_p, value) => ({ ok: true, draft: { value, content: String(value), metadata: {} } }),
    planPostExecute: () => ({ kind: config.post === 'none' ? 'skip' : 'run' }),
    postExecute: () => (config.post === 'pending' ? never() : outcomeOf(postOutcomes, config.post)),
    finalize: (request, _p, s) =>
      ({ callId: request.callId, toolName: request.toolName, isError: !s.ok, ...(s.ok ? {} : { error: s.error }), content: '', metadata: {} }) as ToolResult,
    record: (event: NewLogEvent) => void recorded.push(describeLogEvent(event)),
    isMetered: () => false,
  };
}

/** The part of a log event a path pins down: its type and the one field that tells branches apart. */
export function describeLogEvent(e: NewLogEvent): string {
  switch (e.type) {
    case 'tool/approval-answer':
      return `${e.type}:${e.answer}`;
    case 'hook/failed':
      return `${e.type}:${e.hook}`;
    case 'warning':
      return `${e.type}:${e.code}`;
    default:
      return e.type;
  }
}

export function toolCallInput(config: ToolCallConfig, recorded?: string[]): ToolCallInput {
  return { request: { callId: 'call-0', toolName: 'probe', input: '{"n":1}' }, where: { index: 0 }, pipeline: scriptedPipeline(config, recorded) };
}

export function resultCodeOf(snapshot: AnyMachineSnapshot): string {
  const r = snapshot.output as ToolResult | undefined;
  return r ? (r.error?.code ?? 'ok') : '(none)';
}

/**
 * The events a state listens to (read from its transitions with `getNextTransitions`, `after`
 * included), with payloads. Events a state raises to itself (`PRE.PENDING`) belong to transient
 * states and are never offered: a graph state is always at rest.
 */
export function offeredEvents(snapshot: AnyMachineSnapshot, table: Readonly<Record<string, readonly object[]>>, skip: ReadonlySet<string> = new Set()): AnyEventObject[] {
  if (snapshot.status !== 'active') return [];
  const types = [...new Set(getNextTransitions(snapshot).map((t) => t.eventType))].filter((t) => t !== '' && !skip.has(t) && !t.includes('*'));
  return types.flatMap((type) => (table[type] ?? [{}]).map((p) => ({ type, ...p })));
}

export function describeToolCallEvent(e: AnyEventObject): string {
  if (e.type.startsWith('xstate.after.')) return `after ${e.type.split('.')[2]}`;
  if (e.type === 'PRE.DECIDED' || e.type === 'POST.DONE') return `${e.type}(${e.outcome.kind})`;
  if (e.type === 'APPROVAL.ANSWERED') return `${e.type}(${e.answer})`;
  if (e.type === 'EXECUTED') return `${e.type}(${e.settlement.ok ? 'ok' : 'failed'})`;
  return e.type;
}

export const toolCallGraph: GraphModel<ToolCallConfig> = {
  machine: toolCallMachine,
  input: (config) => toolCallInput(config),
  events: (snapshot) => offeredEvents(snapshot, payloadsAt(snapshot)),
  serialize: (s) => (s.status === 'done' ? `settled:${resultCodeOf(s)}` : JSON.stringify(s.value)),
  describe: describeToolCallEvent,
};

/** The class with every stage present and answering later: the richest graph, walked with simple paths too. */
export const allPending = (c: ConfigClass<ToolCallConfig>) =>
  c.config.prepare === 'ok' && c.config.pre === 'pending' && c.config.guard === 'pass' && c.config.post === 'pending' && !c.config.remembered;

let cached: Plan<ToolCallConfig> | undefined;

/** Every configuration class's shortest paths to a settled call, and every simple path of the richest class. */
export function planToolCallPaths(): Plan<ToolCallConfig> {
  cached ??= planPaths(toolCallGraph, enumerateConfigs(toolCallDims, (c) => exploreGraph(toolCallGraph, c)), { simplePathsFor: allPending });
  return cached;
}
