/**
 * The session log and the stage stream, projected onto OpenTelemetry spans and metrics in the
 * GenAI semantic conventions (docs/telemetry.md shows the tree and every name):
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
 * The log is the truth: spans open and close on its events, at its times. Attributes whose value
 * is unknown are passed as `undefined` (the API's `Attributes` allows it; the SDK drops them).
 * Browser-safe: only types come from `@opentelemetry/api`, the module itself is injected.
 */
import type { Attributes, Context, Histogram, Span, SpanContext, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { addTokenUsage, type LogEvent, type LogEventOf, type TokenUsage } from '../../protocol/index.js';
import type { Clock } from '../clock.js';
import type { CallStageEvent } from '../inspection/stageEvents.js';
import type { Telemetry, TelemetryOptions, TelemetryProjection } from './telemetryOptions.js';

// The API's enums, by value: only their types may be imported (the module is an optional peer).
const INTERNAL = 0 as SpanKind.INTERNAL;
const CLIENT = 2 as SpanKind.CLIENT;
const ERROR = 2 as SpanStatusCode.ERROR;

interface Request {
  readonly span: Span;
  readonly startedAt: number;
  /** The provider and model, as `gen_ai.provider.name` and `gen_ai.request.model`. */
  readonly model: Attributes;
  endedAt?: number;
  failed?: boolean;
  /** The step it belongs to, once known (a step's first request starts before its `step/start`). */
  step?: Step;
}

interface Step {
  readonly index: number;
  readonly requests: Request[];
}

interface Call {
  readonly span: Span;
  readonly tool: string;
  readonly startedAt: number;
  finalizedAt?: number;
}

interface Turn {
  readonly id: string;
  readonly span: Span;
  readonly ctx: Context;
  step?: Step;
  usage?: TokenUsage;
  model?: Attributes;
}

/** The `gen_ai.provider.name` of an AI SDK provider id (`anthropic.messages` → `anthropic`). */
export const providerName = (provider: string): string => provider.split('.')[0]!;

const keyOf = (e: { turnId?: string; stepIndex?: number; callId: string }) => `${e.turnId}\u0000${e.stepIndex}\u0000${e.callId}`;

const usageOf = (u: TokenUsage | undefined): Attributes => ({
  'gen_ai.usage.input_tokens': u?.inputTokens,
  'gen_ai.usage.output_tokens': u?.outputTokens,
  'gen_ai.usage.cache_read.input_tokens': u?.cacheReadTokens,
  'gen_ai.usage.cache_creation.input_tokens': u?.cacheWriteTokens,
  'gen_ai.usage.reasoning.output_tokens': u?.reasoningTokens,
});


/** A call's arguments as the model sent them (raw JSON text, or the logged value as JSON: the log holds JSON only). */
const jsonText = (v: unknown): string => (typeof v === 'string' ? v : String(JSON.stringify(v)));

/** Stage outcomes that stopped the call on a decision (a policy, a guard, a person, a post-execute check). */
const DECISIONS = ['deny', 'denied', 'timeout', 'blocked'];
/** The conventions' advised bucket boundaries (seconds) for GenAI durations. */
const SECONDS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

/**
 * OpenTelemetry for `createRuntime({ telemetry: otelTelemetry({ api, tracer, meter }) })` (docs/telemetry.md).
 *
 * @example
 * ```ts
 * import * as otel from '@opentelemetry/api';
 *
 * const rt = createRuntime({
 *   tools,
 *   telemetry: otelTelemetry({ api: otel, tracer: otel.trace.getTracer('my-app'), meter: otel.metrics.getMeter('my-app') }),
 * });
 * ```
 */
export function otelTelemetry(options: TelemetryOptions): Telemetry {
  return ({ clock }) => createTelemetryProjection({ ...options, clock });
}

export function createTelemetryProjection(options: TelemetryOptions & { readonly clock: Clock }): TelemetryProjection {
  const { api, clock, meter } = options;
  const tracer = options.tracer ?? api.trace.getTracer('dsh');
  const histogram = (name: string, unit: string): Histogram | undefined =>
    meter?.createHistogram(name, unit === 's' ? { unit, advice: { explicitBucketBoundaries: SECONDS } } : { unit });
  const toolDuration = histogram('gen_ai.execute_tool.duration', 's');
  const operationDuration = histogram('gen_ai.client.operation.duration', 's');
  const tokenUsage = histogram('gen_ai.client.token.usage', '{token}');
  const agent = options.agentName ?? 'dsh';
  const content = options.recordContent === true;
  const conversation = options.conversationId;

  const turns = new Map<string, Turn>();
  /** Turns that ended here: their late events open nothing. */
  const ended = new Set<string>();
  /** The span context of each turn suspended here, for the resumed turn's link. */
  const suspended = new Map<string, SpanContext>();
  const calls = new Map<string, Call>();
  /**
   * What happened to calls whose span is not open yet, applied when it opens: stage events before
   * their `tool/call` (validating comes first) and, in a resumed turn, what comes before the
   * `tool/result` of a call logged before the suspension (its approval answer, its stages).
   */
  const early = new Map<string, Array<[number, (c: Call) => void]>>();
  /** The turn whose step is requesting (one turn runs at a time in a runtime). */
  let running: Turn | undefined;
  /** A request made while no step was open: the next step's first. */
  let next: Request | undefined;

  const openTurn = (id: string, at: number, attributes: Attributes, from?: SpanContext): Turn => {
    const active = api.context.active();
    const span = tracer.startSpan(
      `invoke_agent ${agent}`,
      {
        kind: INTERNAL,
        startTime: at,
        attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': agent, 'gen_ai.conversation.id': conversation, 'dsh.turn.id': id, ...attributes },
        ...(from ? { links: [{ context: from }] } : {}),
      },
      active,
    );
    const t: Turn = { id, span, ctx: api.trace.setSpan(active, span) };
    turns.set(id, t);
    return t;
  };

  /** The turn of an event; an event of a turn this projection has not seen start is a resumed turn. */
  const turnOf = (e: { turnId?: string; time: number; type?: string }): Turn | undefined => {
    const id = e.turnId;
    if (id === undefined || ended.has(id)) return undefined;
    const t = turns.get(id);
    if (t || e.type === 'turn/start') return t;
    const from = suspended.get(id);
    suspended.delete(id);
    return openTurn(id, e.time, { 'dsh.turn.resumed': true }, from);
  };

  const endRequest = (r: Request, at: number, error?: string) => {
    const end = Math.min(r.endedAt ?? at, at);
    r.span.end(end);
    operationDuration?.record((end - r.startedAt) / 1000, { 'gen_ai.operation.name': 'chat', ...r.model, ...(error ? { 'error.type': error } : {}) });
  };

  const closeStep = (t: Turn, at: number, finishReason?: string, usage?: TokenUsage) => {
    const s = t.step;
    t.step = undefined;
    if (running === t) running = undefined;
    const r = s?.requests[s.requests.length - 1];
    if (!r || r.failed) return;
    r.span.setAttributes({ 'gen_ai.response.finish_reasons': finishReason === undefined ? undefined : [finishReason], ...usageOf(usage) });
    for (const [type, n] of [['input', usage?.inputTokens], ['output', usage?.outputTokens]] as const) {
      if (n !== undefined) tokenUsage?.record(n, { 'gen_ai.operation.name': 'chat', ...r.model, 'gen_ai.token.type': type });
    }
    endRequest(r, at);
  };

  /** Ends every open call span of a turn, marked with `mark`. */
  const closeCalls = (turnId: string, at: number, mark: string) => {
    for (const [key, c] of calls) {
      if (!key.startsWith(`${turnId}\u0000`)) continue;
      c.span.setAttribute(mark, true);
      c.span.end(at);
      calls.delete(key);
      early.delete(key);
    }
  };

  const stageEvent = (c: Call, e: Extract<CallStageEvent, { type: 'stage/exited' }>) => {
    if (e.stage === 'finalizing') c.finalizedAt = e.at;
    if (!c.span.isRecording()) return;
    const o = e.outcome;
    c.span.addEvent(`dsh.stage.${e.stage}`, { 'dsh.stage.outcome': o.kind, 'dsh.stage.duration_ms': e.durationMs, 'dsh.stage.listener': o.listener }, e.enteredAt);
    if (DECISIONS.includes(o.kind)) {
      c.span.setAttributes({
        'dsh.policy.decision': o.kind,
        'dsh.policy.stage': e.stage,
        'dsh.policy.listener': o.listener ?? (e.stage === 'awaitingApproval' ? 'approval' : undefined),
        'dsh.policy.reason': content ? o.message : undefined,
      });
    }
  };

  /** Opens a call's span (`logged`: its `tool/call`, when this projection saw it). */
  const openCall = (e: { turnId?: string; stepIndex?: number; callId: string; toolName: string; time: number }, logged?: LogEventOf<'tool/call'>): Call => {
    const t = turnOf(e);
    const s = t?.step;
    const parent = s?.requests[s.requests.length - 1]?.span ?? t?.span;
    const key = keyOf(e);
    const pending = early.get(key) ?? [];
    early.delete(key);
    const startedAt = Math.min(e.time, ...pending.map((p) => p[0]));
    // A turn whose span records nothing (no provider, or sampled out) gets no child spans: its
    // calls use the turn's own non-recording span, so only the metrics cost anything.
    const span = t && !t.span.isRecording() ? t.span : tracer.startSpan(
      `execute_tool ${e.toolName}`,
      {
        kind: INTERNAL,
        startTime: startedAt,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': e.toolName,
          'gen_ai.tool.call.id': e.callId,
          'gen_ai.tool.type': 'function',
          'gen_ai.tool.call.arguments': content && logged ? jsonText(logged.input) : undefined,
          'dsh.call.execution_mode': logged?.executionMode,
          'dsh.turn.id': e.turnId,
          'dsh.step.index': e.stepIndex,
        },
      },
      parent && t ? api.trace.setSpan(t.ctx, parent) : api.context.active(),
    );
    const c: Call = { span, tool: e.toolName, startedAt };
    calls.set(key, c);
    for (const p of pending) p[1](c);
    return c;
  };

  /** Applies `apply` to a call's span now, or when it opens. */
  const withCall = (e: { turnId?: string; stepIndex?: number; callId: string; time: number }, apply: (c: Call) => void, at = e.time): void => {
    const key = keyOf(e);
    const c = calls.get(key);
    if (c) return apply(c);
    if (e.turnId !== undefined && ended.has(e.turnId)) return;
    early.set(key, [...(early.get(key) ?? []), [at, apply]]);
  };

  const callEnded = (e: LogEventOf<'tool/result'>) => {
    if (e.turnId !== undefined && ended.has(e.turnId)) return;
    const key = keyOf(e);
    const c = calls.get(key) ?? openCall(e);
    const r = e.result;
    const error = r.isError ? r.error.code : undefined;
    const held = c.finalizedAt !== undefined && e.time > c.finalizedAt ? e.time - c.finalizedAt : undefined;
    c.span.setAttributes({
      'error.type': error,
      'gen_ai.tool.call.result': content && !r.isError ? r.content : undefined,
      // Settled, then held until the calls before it were committed (results commit in the model's order).
      'dsh.result.held_ms': held,
    });
    if (error) c.span.setStatus({ code: ERROR, message: error });
    c.span.end(e.time);
    calls.delete(key);
    early.delete(key);
    toolDuration?.record((e.time - c.startedAt) / 1000, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': c.tool, ...(error ? { 'error.type': error } : {}) });
  };

  const endTurn = (t: Turn, at: number, attributes: Attributes, error?: string) => {
    closeStep(t, at);
    closeCalls(t.id, at, 'dsh.call.unfinished');
    t.span.setAttributes({ ...usageOf(t.usage), ...t.model, ...attributes, 'error.type': error });
    if (error) t.span.setStatus({ code: ERROR, message: error });
    t.span.end(at);
    turns.delete(t.id);
    if (running === t) running = undefined;
  };

  const attach = (t: Turn, s: Step, r: Request) => {
    r.step = s;
    t.model = r.model;
    s.requests.push(r);
    r.span.setAttributes({ 'dsh.turn.id': t.id, 'dsh.step.index': s.index, 'dsh.request.attempt': s.requests.length });
  };

  const onEvent = (e: LogEvent): void => {
    switch (e.type) {
      case 'turn/start':
        if (!turns.has(e.turnId) && !ended.has(e.turnId)) openTurn(e.turnId, e.time, {});
        return;
      case 'step/start': {
        const t = turnOf(e);
        if (!t) return;
        closeStep(t, e.time);
        t.step = { index: e.stepIndex, requests: [] };
        running = t;
        if (next) attach(t, t.step, next);
        next = undefined;
        return;
      }
      case 'agent/request-error': {
        const r = turnOf(e)?.step?.requests.at(-1);
        if (!r || r.failed) return;
        r.failed = true;
        r.span.setAttributes({ 'error.type': e.kind, 'dsh.request.action': e.action });
        r.span.setStatus({ code: ERROR, message: e.kind });
        endRequest(r, e.time, e.kind);
        return;
      }
      case 'step/end':
      case 'turn/suspended': {
        const t = turnOf(e);
        if (!t) return;
        t.usage = addTokenUsage(t.usage, e.usage);
        if (t.step?.index === e.stepIndex) closeStep(t, e.time, e.finishReason, e.usage);
        if (e.type === 'step/end') return;
        const waiting = e.calls.map((c) => c.callId);
        const held = e.held.map((c) => c.callId);
        closeCalls(t.id, e.time, 'dsh.call.suspended');
        t.span.addEvent('dsh.turn.suspended', { 'dsh.suspended.calls': waiting, 'dsh.suspended.held': held }, e.time);
        suspended.set(t.id, t.span.spanContext());
        endTurn(t, e.time, { 'dsh.turn.outcome': 'suspended' });
        return;
      }
      case 'turn/end': {
        const t = turnOf(e);
        if (!t) return;
        ended.add(e.turnId);
        endTurn(t, e.time, { 'dsh.turn.outcome': e.outcome, 'dsh.turn.steps': e.steps }, e.outcome === 'completed' ? undefined : e.outcome);
        return;
      }
      case 'tool/call':
        openCall(e, e);
        return;
      case 'tool/result':
        return callEnded(e);
      case 'tool/approval-request':
        turnOf(e);
        return withCall(e, (c) => c.span.addEvent('dsh.approval.requested', {}, e.time));
      case 'tool/approval-answer':
        turnOf(e);
        return withCall(e, (c) => c.span.addEvent('dsh.approval.answered', { 'dsh.approval.answer': e.answer }, e.time));
      case 'tool/spilled':
        return withCall(e, (c) => {
          c.span.setAttribute('dsh.result.spilled', true);
          c.span.addEvent('dsh.result.spilled', { 'dsh.spill.bytes': e.bytes, 'dsh.spill.lines': e.lines }, e.time);
        });
      default:
        return;
    }
  };

  return {
    onEvent,
    metering: meter !== undefined && meter !== api.createNoopMeter?.(),
    // With no tracer given and no provider registered, the global tracer is a proxy with nobody
    // behind it: every span is a no-op (a provider registered later is seen at the next turn).
    tracing: () =>
      options.tracer !== undefined ||
      (api.trace.getTracerProvider?.() as { getDelegateTracer?: (name: string) => unknown } | undefined)?.getDelegateTracer?.('dsh') !== undefined,
    onStage(e) {
      if (e.type !== 'stage/exited') return;
      const c = calls.get(keyOf(e));
      if (c) stageEvent(c, e);
      else withCall({ turnId: e.turnId, stepIndex: e.stepIndex, callId: e.callId, time: e.enteredAt }, (call) => stageEvent(call, e));
    },
    onRequest(model) {
      const t = running;
      const attributes: Attributes = { 'gen_ai.provider.name': providerName(model.provider), 'gen_ai.request.model': model.modelId };
      const startedAt = clock.now();
      // The step's first request comes before its `step/start`: under the turn that is running.
      const turn = t ?? [...turns.values()].at(-1);
      const span = turn && !turn.span.isRecording() ? turn.span : tracer.startSpan(
        `chat ${model.modelId}`,
        { kind: CLIENT, startTime: startedAt, attributes: { 'gen_ai.operation.name': 'chat', ...attributes, 'gen_ai.conversation.id': conversation } },
        turn?.ctx ?? api.context.active(),
      );
      const r: Request = { span, startedAt, model: attributes };
      if (t?.step) attach(t, t.step, r);
      else next = r;
      return {
        ended() {
          r.endedAt ??= clock.now();
        },
      };
    },
    close() {
      const at = clock.now();
      for (const t of [...turns.values()]) endTurn(t, at, { 'dsh.turn.outcome': 'unfinished' });
      for (const c of calls.values()) {
        c.span.setAttribute('dsh.call.unfinished', true);
        c.span.end(at);
      }
      calls.clear();
      early.clear();
    },
  };
}
