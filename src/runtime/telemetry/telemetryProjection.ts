/**
 * The session log and the stage stream, projected onto OpenTelemetry spans and metrics in the
 * GenAI semantic conventions (docs/telemetry.md shows the tree):
 *
 * - `invoke_agent {agent}` per turn (`turn/start` … `turn/end` or `turn/suspended`); a resumed
 *   turn gets a new one, linked to the suspended one's when this projection saw it;
 * - `chat {model}` per model request of a step (a retried request is a span of its own, with
 *   `error.type`), from the request's start to the end of its stream (`observeModel`), with the
 *   step's finish reason and token usage from `step/end`;
 * - `execute_tool {tool}` per call (`tool/call` … `tool/result`), a child of the request that asked
 *   for it, so parallel calls sit side by side under their step; `error.type` is dsh's error code.
 *
 * Each pipeline stage a call passed is a span event `dsh.stage.<stage>` at the stage's start, with
 * its duration and outcome (events, not child spans: a call passes up to seven stages, and a span
 * each would multiply the spans a backend stores for what is one operation of the conventions).
 * Denials name the deciding policy; spills, approval waits, results held for commit order,
 * suspension and resume are marked. No argument or result content unless `recordContent`.
 *
 * The log is the truth: spans open and close on its events, at its times. Browser-safe: only
 * types come from `@opentelemetry/api`, the module itself is injected (`TelemetryOptions.api`).
 */
import type { Attributes, Context, Link, Span, SpanContext, SpanKind, SpanStatusCode, Tracer } from '@opentelemetry/api';
import type { LogEvent, LogEventOf, TokenUsage } from '../../protocol/index.js';
import type { Clock } from '../clock.js';
import type { CallStageEvent } from '../inspection/stageEvents.js';
import { Dsh, GenAi, Operation, SpanEvent } from './attributes.js';
import { createInstruments, type Instruments } from './instruments.js';
import type { ModelRequestListener, ModelRequestWatch } from './observeModel.js';
import type { TelemetryOptions } from './telemetryOptions.js';

// The API's enums, by value: only their types may be imported (the module is an optional peer).
const INTERNAL = 0 as SpanKind.INTERNAL;
const CLIENT = 2 as SpanKind.CLIENT;
const ERROR = 2 as SpanStatusCode.ERROR;

interface RequestState {
  readonly span: Span;
  readonly startedAt: number;
  readonly attributes: Attributes;
  endedAt?: number;
  failed?: boolean;
}

interface PendingRequest {
  readonly model: { provider: string; modelId: string };
  readonly startedAt: number;
  endedAt?: number;
  responseId?: string;
  responseModel?: string;
  /** Its span, once its step is known. */
  state?: RequestState;
}

interface StepState {
  readonly index: number;
  readonly requests: RequestState[];
}

interface CallState {
  readonly span: Span;
  readonly toolName: string;
  readonly startedAt: number;
  finalizedAt?: number;
}

interface TurnState {
  readonly id: string;
  readonly span: Span;
  readonly ctx: Context;
  readonly startedAt: number;
  step: StepState | undefined;
  usage: TokenUsage;
  model?: { provider: string; modelId: string };
}

export interface TelemetryProjection {
  /** Feed every log event, in order (the runtime subscribes it to its log). */
  onEvent(event: LogEvent): void;
  /** Feed every stage event (the runtime subscribes it to its stage stream). */
  onStage(event: CallStageEvent): void;
  /** Hears the model requests (give it to `observeModel`). */
  readonly onRequest: ModelRequestListener;
  /** Ends every span still open (a run that stops mid-turn), marked unfinished. */
  close(): void;
}

/** The `gen_ai.provider.name` of an AI SDK provider id (`anthropic.messages` → `anthropic`). */
export function providerName(provider: string): string {
  const p = provider.split('.')[0] ?? provider;
  return p === 'google' ? 'gcp.gemini' : p;
}

const callKey = (turnId: string | undefined, stepIndex: number | undefined, callId: string) => `${turnId ?? ''}\u0000${stepIndex ?? ''}\u0000${callId}`;

function usageAttributes(u: TokenUsage | undefined): Attributes {
  const a: Attributes = {};
  if (!u) return a;
  if (u.inputTokens !== undefined) a[GenAi.usageInputTokens] = u.inputTokens;
  if (u.outputTokens !== undefined) a[GenAi.usageOutputTokens] = u.outputTokens;
  if (u.cacheReadTokens !== undefined) a[GenAi.usageCacheReadInputTokens] = u.cacheReadTokens;
  if (u.cacheWriteTokens !== undefined) a[GenAi.usageCacheCreationInputTokens] = u.cacheWriteTokens;
  if (u.reasoningTokens !== undefined) a[GenAi.usageReasoningOutputTokens] = u.reasoningTokens;
  return a;
}

const addUsage = (a: TokenUsage, b: TokenUsage | undefined): TokenUsage => {
  if (!b) return a;
  const out: TokenUsage = { ...a };
  for (const k of ['inputTokens', 'outputTokens', 'reasoningTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const) {
    if (b[k] !== undefined) out[k] = (out[k] ?? 0) + b[k]!;
  }
  return out;
};

const jsonText = (v: unknown): string => {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    return String(v);
  }
};

/** Stage outcomes that stopped the call on a decision (a policy, a guard, a person, a post-execute check). */
const DECISIONS = new Set(['deny', 'denied', 'timeout', 'blocked']);

export function createTelemetryProjection(options: TelemetryOptions & { readonly clock: Clock }): TelemetryProjection {
  const { api, clock } = options;
  const tracer: Tracer = options.tracer ?? api.trace.getTracer('dsh');
  const instruments: Instruments | undefined = options.meter ? createInstruments(options.meter) : undefined;
  const agentName = options.agentName ?? 'dsh';
  const content = options.recordContent === true;
  const common: Attributes = options.conversationId !== undefined ? { [GenAi.conversationId]: options.conversationId } : {};

  const turns = new Map<string, TurnState>();
  /** Turns that ended here: their late events open nothing. */
  const ended = new Set<string>();
  /** The span context of each turn suspended here, for the resumed turn's link. */
  const suspended = new Map<string, SpanContext>();
  const calls = new Map<string, CallState>();
  /**
   * What happened to calls whose span is not open yet: stage events before their `tool/call` (validating
   * comes first), and, in a resumed turn, what comes before the `tool/result` of a call logged
   * before the suspension (its approval answer, its stages). Applied when the span opens.
   */
  const early = new Map<string, Array<{ readonly at: number; readonly apply: (c: CallState) => void }>>();
  const later = (key: string, at: number, apply: (c: CallState) => void) => {
    const list = early.get(key);
    if (list) list.push({ at, apply });
    else early.set(key, [{ at, apply }]);
  };
  /** The turn whose step is requesting (one turn runs at a time in a runtime). */
  let running: TurnState | undefined;

  const openTurn = (turnId: string, at: number, extra: Attributes, links: Link[] = []): TurnState => {
    const span = tracer.startSpan(
      `${Operation.invokeAgent} ${agentName}`,
      {
        kind: INTERNAL,
        startTime: at,
        attributes: { [GenAi.operationName]: Operation.invokeAgent, [GenAi.agentName]: agentName, ...common, [Dsh.turnId]: turnId, ...extra },
        links,
      },
      api.context.active(),
    );
    const t: TurnState = { id: turnId, span, ctx: api.trace.setSpan(api.context.active(), span), startedAt: at, step: undefined, usage: {} };
    turns.set(turnId, t);
    return t;
  };

  /** The turn an event belongs to; an event of a turn this projection has not seen start is a resumed turn. */
  const turnOf = (e: LogEvent): TurnState | undefined => {
    const id = e.turnId;
    if (id === undefined || ended.has(id)) return undefined;
    const t = turns.get(id);
    if (t) return t;
    if (e.type === 'turn/start') return undefined;
    const from = suspended.get(id);
    suspended.delete(id);
    const links: Link[] = from ? [{ context: from, attributes: { [Dsh.turnResumed]: true } }] : [];
    const r = openTurn(id, e.time, { [Dsh.turnResumed]: true }, links);
    r.span.addEvent(SpanEvent.resumed, {}, e.time);
    return r;
  };

  const requestAttributes = (t: TurnState, r: RequestState): Attributes => ({
    [GenAi.operationName]: Operation.chat,
    ...(t.model ? { [GenAi.providerName]: providerName(t.model.provider), [GenAi.requestModel]: t.model.modelId } : {}),
    ...r.attributes,
  });

  const endRequest = (t: TurnState, r: RequestState, at: number, error?: string) => {
    const end = Math.min(r.endedAt ?? at, at);
    r.span.end(end);
    const attrs = requestAttributes(t, r);
    if (error !== undefined) attrs[GenAi.errorType] = error;
    delete attrs[GenAi.responseId];
    instruments?.operationDuration((end - r.startedAt) / 1000, attrs);
  };

  const closeStep = (t: TurnState, at: number, finishReason: string | undefined, usage: TokenUsage | undefined) => {
    const s = t.step;
    if (!s) return;
    t.step = undefined;
    if (running === t) running = undefined;
    const last = s.requests[s.requests.length - 1];
    if (last && !last.failed) {
      if (finishReason !== undefined) last.span.setAttribute(GenAi.responseFinishReasons, [finishReason]);
      last.span.setAttributes(usageAttributes(usage));
      const attrs = requestAttributes(t, last);
      delete attrs[GenAi.responseId];
      if (usage?.inputTokens !== undefined) instruments?.tokenUsage(usage.inputTokens, { ...attrs, [GenAi.tokenType]: 'input' });
      if (usage?.outputTokens !== undefined) instruments?.tokenUsage(usage.outputTokens, { ...attrs, [GenAi.tokenType]: 'output' });
      endRequest(t, last, at);
    }
  };

  /** Ends every open call span of a turn (`mark` says why), the held ones marked held. */
  const closeCalls = (turnId: string, at: number, mark: string, held: ReadonlySet<string> = new Set()) => {
    const prefix = `${turnId}\u0000`;
    for (const [key, c] of calls) {
      if (!key.startsWith(prefix)) continue;
      const callId = key.slice(key.lastIndexOf('\u0000') + 1);
      if (held.has(callId)) {
        c.span.addEvent(SpanEvent.held, {}, c.finalizedAt ?? at);
      }
      c.span.setAttribute(mark, true);
      c.span.end(at);
      calls.delete(key);
      early.delete(key);
    }
  };

  const stageEvent = (c: CallState, e: Extract<CallStageEvent, { type: 'stage/exited' }>) => {
    const o = e.outcome;
    const attrs: Attributes = { [Dsh.stageOutcome]: o.kind, [Dsh.stageDurationMs]: e.durationMs };
    if (o.code !== undefined) attrs[Dsh.stageCode] = o.code;
    if (o.listener !== undefined) attrs[Dsh.stageListener] = o.listener;
    c.span.addEvent(`${SpanEvent.stagePrefix}${e.stage}`, attrs, e.enteredAt);
    if (e.stage === 'finalizing') c.finalizedAt = e.at;
    if (DECISIONS.has(o.kind)) {
      c.span.setAttributes({
        [Dsh.policyDecision]: o.kind,
        [Dsh.policyStage]: e.stage,
        ...(o.listener !== undefined ? { [Dsh.policyListener]: o.listener } : e.stage === 'awaitingApproval' ? { [Dsh.policyListener]: 'approval' } : {}),
        ...(content && o.message !== undefined ? { [Dsh.policyReason]: o.message } : {}),
      });
    }
  };

  /** Opens a call's span (`index`, `mode`: as its `tool/call` logged them, when this projection saw it). */
  const openCall = (e: { turnId?: string; stepIndex?: number; callId: string; toolName: string; time: number }, logged?: LogEventOf<'tool/call'>): CallState => {
    const t = turnOf(e as LogEvent);
    const parent = t ? (t.step?.requests[t.step.requests.length - 1]?.span ?? t.span) : undefined;
    const ctx = parent ? api.trace.setSpan(t!.ctx, parent) : api.context.active();
    const key = callKey(e.turnId, e.stepIndex, e.callId);
    const pending = early.get(key) ?? [];
    early.delete(key);
    const startedAt = pending.reduce((at, p) => Math.min(at, p.at), e.time);
    const attributes: Attributes = {
      [GenAi.operationName]: Operation.executeTool,
      [GenAi.toolName]: e.toolName,
      [GenAi.toolCallId]: e.callId,
      [GenAi.toolType]: 'function',
      ...(logged ? { [Dsh.callIndex]: logged.index, [Dsh.executionMode]: logged.executionMode } : {}),
      ...(e.turnId !== undefined ? { [Dsh.turnId]: e.turnId } : {}),
      ...(e.stepIndex !== undefined ? { [Dsh.stepIndex]: e.stepIndex } : {}),
      ...(content && logged ? { [GenAi.toolCallArguments]: jsonText(logged.input) } : {}),
    };
    const span = tracer.startSpan(`${Operation.executeTool} ${e.toolName}`, { kind: INTERNAL, startTime: startedAt, attributes }, ctx);
    const c: CallState = { span, toolName: e.toolName, startedAt };
    calls.set(key, c);
    for (const p of pending) p.apply(c);
    return c;
  };

  const callStarted = (e: LogEventOf<'tool/call'>) => {
    openCall(e, e);
  };

  /**
   * The span of a call, or undefined (then `apply` waits for it). A call of a resumed turn whose
   * `tool/call` came before the suspension is opened by its `tool/result`.
   */
  const withCall = (e: { turnId?: string; stepIndex?: number; callId: string; time: number }, apply: (c: CallState) => void): void => {
    const key = callKey(e.turnId, e.stepIndex, e.callId);
    const c = calls.get(key);
    if (c) return apply(c);
    if (e.turnId !== undefined && ended.has(e.turnId)) return;
    later(key, e.time, apply);
  };

  const callEnded = (e: LogEventOf<'tool/result'>) => {
    if (e.turnId !== undefined && ended.has(e.turnId)) return;
    const c = calls.get(callKey(e.turnId, e.stepIndex, e.callId)) ?? openCall(e);
    const r = e.result;
    if (r.isError) {
      c.span.setAttribute(GenAi.errorType, r.error.code);
      c.span.setStatus({ code: ERROR, message: r.error.code });
    } else if (content) {
      c.span.setAttribute(GenAi.toolCallResult, r.content);
    }
    if (c.finalizedAt !== undefined && e.time > c.finalizedAt) {
      c.span.setAttribute(Dsh.resultHeldMs, e.time - c.finalizedAt);
      c.span.addEvent(SpanEvent.held, { [Dsh.resultHeldMs]: e.time - c.finalizedAt }, c.finalizedAt);
    }
    c.span.end(e.time);
    const key = callKey(e.turnId, e.stepIndex, e.callId);
    calls.delete(key);
    early.delete(key);
    instruments?.toolDuration((e.time - c.startedAt) / 1000, {
      [GenAi.operationName]: Operation.executeTool,
      [GenAi.toolName]: c.toolName,
      ...(r.isError ? { [GenAi.errorType]: r.error.code } : {}),
    });
  };

  const endTurn = (t: TurnState, at: number, attrs: Attributes, error?: string) => {
    closeStep(t, at, undefined, undefined);
    closeCalls(t.id, at, Dsh.callUnfinished);
    t.span.setAttributes({ ...usageAttributes(t.usage), ...attrs });
    if (t.model) t.span.setAttributes({ [GenAi.providerName]: providerName(t.model.provider), [GenAi.requestModel]: t.model.modelId });
    if (error !== undefined) {
      t.span.setAttribute(GenAi.errorType, error);
      t.span.setStatus({ code: ERROR, message: error });
    }
    t.span.end(at);
    turns.delete(t.id);
    if (running === t) running = undefined;
    instruments?.operationDuration((at - t.startedAt) / 1000, {
      [GenAi.operationName]: Operation.invokeAgent,
      ...(t.model ? { [GenAi.providerName]: providerName(t.model.provider), [GenAi.requestModel]: t.model.modelId } : {}),
      ...(error !== undefined ? { [GenAi.errorType]: error } : {}),
    });
  };

  const onEvent = (e: LogEvent): void => {
    switch (e.type) {
      case 'turn/start': {
        if (turns.has(e.turnId) || ended.has(e.turnId)) return;
        openTurn(e.turnId, e.time, e.followUp ? { [Dsh.followUp]: e.followUp.kind } : {});
        return;
      }
      case 'step/start': {
        const t = turnOf(e);
        if (!t) return;
        closeStep(t, e.time, undefined, undefined);
        t.step = { index: e.stepIndex, requests: [] };
        running = t;
        if (next) attach(t, t.step, next);
        next = undefined;
        return;
      }
      case 'agent/request-error': {
        const t = turnOf(e);
        const r = t?.step?.requests[t.step.requests.length - 1];
        if (!t || !r || r.failed) return;
        r.failed = true;
        r.span.setAttributes({
          [GenAi.errorType]: e.kind,
          [Dsh.requestAction]: e.action,
          ...(e.status !== undefined ? { [Dsh.requestStatus]: e.status } : {}),
          ...(e.delayMs !== undefined ? { [Dsh.requestDelayMs]: e.delayMs } : {}),
        });
        r.span.setStatus({ code: ERROR, message: e.kind });
        endRequest(t, r, e.time, e.kind);
        return;
      }
      case 'step/end': {
        const t = turnOf(e);
        if (!t) return;
        t.usage = addUsage(t.usage, e.usage);
        if (t.step?.index === e.stepIndex) closeStep(t, e.time, e.finishReason, e.usage);
        return;
      }
      case 'tool/call':
        return callStarted(e);
      case 'tool/result':
        return callEnded(e);
      case 'tool/approval-request': {
        turnOf(e);
        return withCall(e, (c) => c.span.addEvent(SpanEvent.approvalRequested, {}, e.time));
      }
      case 'tool/approval-answer': {
        turnOf(e);
        return withCall(e, (c) => c.span.addEvent(SpanEvent.approvalAnswered, { [Dsh.approvalAnswer]: e.answer }, e.time));
      }
      case 'tool/spilled':
        return withCall(e, (c) => {
          c.span.setAttribute(Dsh.resultSpilled, true);
          c.span.addEvent(SpanEvent.spilled, { [Dsh.spillBytes]: e.bytes, [Dsh.spillLines]: e.lines }, e.time);
        });
      case 'hook/failed':
        return withCall(e, (c) => c.span.addEvent(SpanEvent.hookFailed, { [Dsh.hook]: e.hook, [Dsh.hookListener]: e.listener, [Dsh.hookFailed]: e.failed }, e.time));
      case 'warning': {
        if (e.callId !== undefined) return withCall({ ...e, callId: e.callId }, (c) => c.span.addEvent(SpanEvent.warning, { [Dsh.warningCode]: e.code }, e.time));
        turnOf(e)?.span.addEvent(SpanEvent.warning, { [Dsh.warningCode]: e.code }, e.time);
        return;
      }
      case 'context/compacted': {
        turnOf(e)?.span.addEvent(SpanEvent.compacted, { [Dsh.compactionStrategy]: e.strategy }, e.time);
        return;
      }
      case 'user/steer': {
        turnOf(e)?.span.addEvent(SpanEvent.steered, { [Dsh.stepIndex]: e.stepIndex }, e.time);
        return;
      }
      case 'turn/suspended': {
        const t = turnOf(e);
        if (!t) return;
        t.usage = addUsage(t.usage, e.usage);
        if (t.step?.index === e.stepIndex) closeStep(t, e.time, e.finishReason, e.usage);
        const waiting = e.calls.map((c) => c.callId);
        const held = e.held.map((c) => c.callId);
        closeCalls(t.id, e.time, Dsh.callSuspended, new Set(held));
        t.span.addEvent(SpanEvent.suspended, { [Dsh.suspendedCalls]: waiting, [Dsh.heldCalls]: held }, e.time);
        suspended.set(t.id, t.span.spanContext());
        endTurn(t, e.time, { [Dsh.turnOutcome]: 'suspended' });
        return;
      }
      case 'turn/end': {
        const t = turnOf(e);
        if (!t) return;
        ended.add(e.turnId);
        endTurn(t, e.time, { [Dsh.turnOutcome]: e.outcome, [Dsh.turnSteps]: e.steps }, e.outcome === 'completed' ? undefined : e.outcome);
        return;
      }
      default:
        return;
    }
  };

  const onStage = (e: CallStageEvent): void => {
    if (e.type !== 'stage/exited') return;
    const key = callKey(e.turnId, e.stepIndex, e.callId);
    const c = calls.get(key);
    if (c) return stageEvent(c, e);
    if (e.turnId !== undefined && ended.has(e.turnId)) return;
    later(key, e.enteredAt, (call) => stageEvent(call, e));
  };

  /**
   * A step's first request is sent before its `step/start` is logged (the step's model actor
   * starts with the step): a request made while no step is open belongs to the next step.
   */
  let next: PendingRequest | undefined;

  const attach = (t: TurnState, s: StepState, p: PendingRequest): void => {
    t.model = p.model;
    const attributes: Attributes = {
      [GenAi.operationName]: Operation.chat,
      [GenAi.providerName]: providerName(p.model.provider),
      [GenAi.requestModel]: p.model.modelId,
      ...common,
      [Dsh.turnId]: t.id,
      [Dsh.stepIndex]: s.index,
      [Dsh.requestAttempt]: s.requests.length + 1,
      ...(p.responseId !== undefined ? { [GenAi.responseId]: p.responseId } : {}),
      ...(p.responseModel !== undefined ? { [GenAi.responseModel]: p.responseModel } : {}),
    };
    const span = tracer.startSpan(`${Operation.chat} ${p.model.modelId}`, { kind: CLIENT, startTime: p.startedAt, attributes }, t.ctx);
    const r: RequestState = { span, startedAt: p.startedAt, attributes: p.responseModel !== undefined ? { [GenAi.responseModel]: p.responseModel } : {} };
    if (p.endedAt !== undefined) r.endedAt = p.endedAt;
    p.state = r;
    s.requests.push(r);
  };

  const onRequest: ModelRequestListener = (model): ModelRequestWatch | undefined => {
    const p: PendingRequest = { model: { provider: model.provider, modelId: model.modelId }, startedAt: clock.now() };
    const t = running;
    if (t?.step) attach(t, t.step, p);
    else next = p;
    return {
      metadata(id, modelId) {
        p.responseId ??= id;
        p.responseModel ??= modelId;
        const r = p.state;
        if (!r) return;
        if (id !== undefined) r.span.setAttribute(GenAi.responseId, id);
        if (modelId !== undefined) {
          r.span.setAttribute(GenAi.responseModel, modelId);
          r.attributes[GenAi.responseModel] = modelId;
        }
      },
      ended() {
        p.endedAt ??= clock.now();
        if (p.state) p.state.endedAt ??= p.endedAt;
      },
    };
  };

  return {
    onEvent,
    onStage,
    onRequest,
    close() {
      const at = clock.now();
      for (const t of [...turns.values()]) endTurn(t, at, { [Dsh.turnOutcome]: 'unfinished' });
      for (const c of calls.values()) {
        c.span.setAttribute(Dsh.callUnfinished, true);
        c.span.end(at);
      }
      calls.clear();
      early.clear();
    },
  };
}
