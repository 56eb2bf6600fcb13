/**
 * Issue 27: a turn's spans and metrics, on the real OpenTelemetry SDK (BasicTracerProvider with an
 * in-memory exporter, MeterProvider with a reader collected by hand). The turn has a request retry,
 * two parallel calls, a denied call and a spilled result; the tree, the attribute names (against the
 * conventions' lists in conventions.ts), the error codes and the metrics are checked.
 */
import * as otel from '@opentelemetry/api';
import { AggregationTemporality, MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { AlwaysOffSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rateLimitError, scriptedModel } from '../../../src/adapters/model/index.js';
import { ErrorCode } from '../../../src/protocol/index.js';
import { createRuntime } from '../../../src/runtime/createRuntime.js';
import { otelTelemetry } from '../../../src/telemetry.js';
import { defineTool } from '../../../src/runtime/defineTool.js';
import type { RequestRetryPolicy } from '../../../src/runtime/requestErrors.js';
import { suspendingApproval } from '../../../src/runtime/pipeline/approvalService.js';
import type { ApprovalService } from '../../../src/runtime/pipeline/index.js';
import { EXECUTE_TOOL_SPAN, INFERENCE_SPAN, INVOKE_AGENT_INTERNAL_SPAN, isDshOwn, OPERATION_DURATION_METRIC, TOKEN_USAGE_METRIC } from './conventions.js';

class HandReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

function sdk() {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new HandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    exporter,
    telemetry: { api: otel, tracer: tracerProvider.getTracer('dsh-test'), meter: meterProvider.getMeter('dsh-test'), conversationId: 'session-1' },
    metrics: async (): Promise<ResourceMetrics> => (await reader.collect()).resourceMetrics,
  };
}

const lookup = defineTool({ name: 'lookup', input: z.object({ key: z.string() }), readOnly: true, isConcurrencySafe: () => true, execute: (a) => `value of ${a.key}` });
const big = defineTool({ name: 'big', input: z.object({}), readOnly: true, isConcurrencySafe: () => true, execute: () => Array.from({ length: 400 }, (_, i) => `line ${i}`).join('\n') });
const remove = defineTool({ name: 'remove', input: z.object({ path: z.string() }), execute: () => 'removed' });

/** Retries once at once (a rate limit), then gives up. */
const retryOnce: RequestRetryPolicy = { maxAttempts: 2, decide: () => ({ action: 'retry', delayMs: 0 }) };

const SECRET_ARG = 'secret-argument-7f3a';
const SECRET_RESULT = 'value of secret-argument-7f3a';

function script() {
  return scriptedModel(
    [
      { error: rateLimitError() },
      {
        toolCalls: [
          { toolName: 'lookup', input: { key: SECRET_ARG }, toolCallId: 'c-a' },
          { toolName: 'lookup', input: { key: 'b' }, toolCallId: 'c-b' },
          { toolName: 'big', input: {}, toolCallId: 'c-big' },
          { toolName: 'remove', input: { path: '/etc' }, toolCallId: 'c-rm' },
        ],
        usage: { inputTokens: 120, outputTokens: 30 },
      },
      { text: 'done', usage: { inputTokens: 200, outputTokens: 5 } },
    ],
    { modelId: 'test-model' },
  );
}

async function runTurn(recordContent = false) {
  const s = sdk();
  const rt = createRuntime({ tools: [lookup, big, remove], retryPolicy: retryOnce, maxInlineBytes: 256, telemetry: otelTelemetry({ ...s.telemetry, recordContent }) });
  rt.hooks.on('tools/pre-execute', 'no-remove', (call) => (call.toolName === 'remove' ? { kind: 'deny', reason: 'removing is not allowed here' } : undefined));
  const out = await rt.startTurn({ model: script(), input: 'go' }).done;
  expect(out.outcome).toBe('completed');
  await rt.close();
  return { spans: s.exporter.getFinishedSpans(), metrics: await s.metrics(), log: rt.log.events() };
}

const attr = (s: ReadableSpan, k: string) => s.attributes[k];
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const byName = (spans: readonly ReadableSpan[], name: string) => spans.filter((s) => s.name === name);

function checkNames(s: ReadableSpan, list: { required: readonly string[]; all: readonly string[] }) {
  for (const k of Object.keys(s.attributes)) {
    if (!isDshOwn(k)) expect(list.all, `${s.name}: ${k} is not in the conventions' list`).toContain(k);
  }
  for (const k of list.required) expect(s.attributes, `${s.name} lacks ${k}`).toHaveProperty([k]);
}

describe('telemetry: a turn as GenAI spans (issue 27)', () => {
  it('builds the tree: invoke_agent > chat (the failed attempt, then the one that asked) > execute_tool per call', async () => {
    const { spans } = await runTurn();
    const [turn] = byName(spans, 'invoke_agent dsh');
    expect(turn).toBeDefined();
    expect(parentOf(turn!)).toBeUndefined();
    const chats = byName(spans, 'chat test-model');
    // Step 0: the rate-limited request and its retry; step 1: the answer.
    expect(chats.map((c) => [attr(c, 'dsh.step.index'), attr(c, 'dsh.request.attempt')])).toEqual(
      expect.arrayContaining([
        [0, 1],
        [0, 2],
        [1, 1],
      ]),
    );
    expect(chats).toHaveLength(3);
    for (const c of chats) expect(parentOf(c)).toBe(turn!.spanContext().spanId);
    const asked = chats.find((c) => attr(c, 'dsh.step.index') === 0 && attr(c, 'dsh.request.attempt') === 2)!;
    const tools = spans.filter((s) => s.name.startsWith('execute_tool '));
    expect(tools.map((t) => t.name).sort()).toEqual(['execute_tool big', 'execute_tool lookup', 'execute_tool lookup', 'execute_tool remove']);
    // Every call, the parallel ones side by side, is a child of the request that asked for it.
    for (const t of tools) expect(parentOf(t)).toBe(asked.spanContext().spanId);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    // Kinds, as the conventions say: chat CLIENT, the others INTERNAL.
    expect(chats.every((c) => c.kind === otel.SpanKind.CLIENT)).toBe(true);
    expect([turn!, ...tools].every((s) => s.kind === otel.SpanKind.INTERNAL)).toBe(true);
  });

  it("uses only the conventions' attribute names (besides dsh.*), with the required ones", async () => {
    const { spans } = await runTurn();
    for (const s of spans) {
      const op = attr(s, 'gen_ai.operation.name');
      if (op === 'invoke_agent') checkNames(s, INVOKE_AGENT_INTERNAL_SPAN);
      else if (op === 'chat') checkNames(s, INFERENCE_SPAN);
      else if (op === 'execute_tool') checkNames(s, EXECUTE_TOOL_SPAN);
      else throw new Error(`a span with no known gen_ai.operation.name: ${s.name}`);
    }
  });

  it('records the model, usage, finish reasons, the retry and the conversation on the requests', async () => {
    const { spans, log } = await runTurn();
    const chats = byName(spans, 'chat test-model');
    const failed = chats.find((c) => attr(c, 'dsh.request.attempt') === 1 && attr(c, 'dsh.step.index') === 0)!;
    const err = log.find((e) => e.type === 'agent/request-error');
    expect(err).toMatchObject({ action: 'retry', kind: 'retryable' });
    expect(attr(failed, 'error.type')).toBe('retryable');
    expect(attr(failed, 'dsh.request.action')).toBe('retry');
    expect(failed.status.code).toBe(otel.SpanStatusCode.ERROR);
    const asked = chats.find((c) => attr(c, 'dsh.request.attempt') === 2)!;
    expect(asked.attributes).toMatchObject({
      'gen_ai.provider.name': 'dsh',
      'gen_ai.request.model': 'test-model',
      'gen_ai.response.finish_reasons': ['tool-calls'],
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.conversation.id': 'session-1',
    });
    expect(asked.attributes).not.toHaveProperty(['error.type']);
    const answer = chats.find((c) => attr(c, 'dsh.step.index') === 1)!;
    expect(answer.attributes).toMatchObject({ 'gen_ai.response.finish_reasons': ['stop'], 'gen_ai.usage.input_tokens': 200, 'gen_ai.usage.output_tokens': 5 });
    const [turn] = byName(spans, 'invoke_agent dsh');
    expect(turn!.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 320, 'gen_ai.usage.output_tokens': 35, 'dsh.turn.outcome': 'completed', 'gen_ai.agent.name': 'dsh', 'gen_ai.provider.name': 'dsh' });
  });

  it('names the call, its error code, the deciding policy, the spill and every stage with its duration', async () => {
    const { spans } = await runTurn();
    const tool = (id: string) => spans.find((s) => attr(s, 'gen_ai.tool.call.id') === id)!;
    const denied = tool('c-rm');
    expect(denied.attributes).toMatchObject({ 'gen_ai.tool.name': 'remove', 'error.type': ErrorCode.POLICY_DENIED, 'dsh.policy.decision': 'deny', 'dsh.policy.stage': 'preExecute', 'dsh.policy.listener': 'no-remove' });
    expect(denied.status.code).toBe(otel.SpanStatusCode.ERROR);
    // Stages as span events, in order, each with its duration: the denied call never executed.
    const stages = (s: ReadableSpan) => s.events.filter((e) => e.name.startsWith('dsh.stage.')).map((e) => e.name.slice('dsh.stage.'.length));
    expect(stages(denied)).toEqual(['validating', 'preExecute', 'finalizing']);
    // A small result skips postExecute (the spill policy applies only to what may exceed its limit).
    const ok = tool('c-b');
    expect(stages(ok)).toEqual(['validating', 'preExecute', 'executing', 'finalizing']);
    expect(ok.events.every((e) => !e.name.startsWith('dsh.stage.') || typeof e.attributes?.['dsh.stage.duration_ms'] === 'number')).toBe(true);
    expect(ok.attributes).not.toHaveProperty(['error.type']);
    expect(ok.attributes).toMatchObject({ 'gen_ai.tool.type': 'function', 'dsh.call.execution_mode': 'parallel' });
    const spilled = tool('c-big');
    expect(stages(spilled)).toEqual(['validating', 'preExecute', 'executing', 'postExecute', 'finalizing']);
    expect(spilled.attributes['dsh.result.spilled']).toBe(true);
    const spill = spilled.events.find((e) => e.name === 'dsh.result.spilled');
    expect(spill?.attributes?.['dsh.spill.lines']).toBe(400);
  });

  it('records no argument or result content by default, and both with recordContent', async () => {
    const plain = await runTurn(false);
    const text = JSON.stringify(plain.spans.map((s) => [s.attributes, s.events]));
    expect(text).not.toContain(SECRET_ARG);
    for (const k of EXECUTE_TOOL_SPAN.optIn) expect(text).not.toContain(k);
    // A policy's reason is content too (it may quote the arguments): only with recordContent.
    expect(text).not.toContain('removing is not allowed here');
    expect(plain.spans.find((s) => attr(s, 'gen_ai.tool.call.id') === 'c-rm')!.attributes['dsh.policy.decision']).toBe('deny');
    expect(plain.spans.find((s) => attr(s, 'gen_ai.tool.call.id') === 'c-rm')!.attributes).not.toHaveProperty('dsh.policy.reason');
    const withContent = await runTurn(true);
    const a = withContent.spans.find((s) => attr(s, 'gen_ai.tool.call.id') === 'c-a')!;
    expect(JSON.parse(String(attr(a, 'gen_ai.tool.call.arguments')))).toEqual({ key: SECRET_ARG });
    expect(attr(a, 'gen_ai.tool.call.result')).toBe(SECRET_RESULT);
    expect(withContent.spans.find((s) => attr(s, 'gen_ai.tool.call.id') === 'c-rm')!.attributes['dsh.policy.reason']).toBe('removing is not allowed here');
  });

  it('records gen_ai.execute_tool.duration by tool and outcome, operation duration and token usage per request', async () => {
    const { metrics } = await runTurn();
    const all = metrics.scopeMetrics.flatMap((s) => s.metrics);
    const metric = (name: string) => all.find((m) => m.descriptor.name === name)!;
    const tool = metric('gen_ai.execute_tool.duration');
    expect(tool.descriptor.unit).toBe('s');
    const points = tool.dataPoints.map((p) => ({ ...p.attributes, count: (p.value as { count: number }).count }));
    expect(points).toEqual(
      expect.arrayContaining([
        { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup', count: 2 },
        { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'big', count: 1 },
        { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'remove', 'error.type': ErrorCode.POLICY_DENIED, count: 1 },
      ]),
    );
    for (const p of tool.dataPoints) for (const k of Object.keys(p.attributes)) expect(EXECUTE_TOOL_SPAN.all).toContain(k);
    const duration = metric('gen_ai.client.operation.duration');
    expect(duration.descriptor.unit).toBe(OPERATION_DURATION_METRIC.unit);
    const chats = duration.dataPoints.filter((p) => p.attributes['gen_ai.operation.name'] === 'chat');
    const count = (ps: typeof chats) => ps.reduce((n, p) => n + (p.value as { count: number }).count, 0);
    expect(count(chats)).toBe(3);
    expect(count(chats.filter((p) => p.attributes['error.type'] === 'retryable'))).toBe(1);
    for (const p of duration.dataPoints) for (const k of Object.keys(p.attributes)) expect(OPERATION_DURATION_METRIC.all).toContain(k);
    const tokens = metric('gen_ai.client.token.usage');
    expect(tokens.descriptor.unit).toBe(TOKEN_USAGE_METRIC.unit);
    const sum = (type: string) => tokens.dataPoints.filter((p) => p.attributes['gen_ai.token.type'] === type).reduce((n, p) => n + (p.value as { sum: number }).sum, 0);
    expect(sum('input')).toBe(320);
    expect(sum('output')).toBe(35);
    for (const p of tokens.dataPoints) for (const k of Object.keys(p.attributes)) expect(TOKEN_USAGE_METRIC.all).toContain(k);
  });
});

describe('telemetry: suspension and resume (issue 27)', () => {
  it("marks the suspended turn and its waiting call, and links the resumed turn's span to it", async () => {
    const s = sdk();
    const allowAll: ApprovalService = { request: async () => 'allowed-once' };
    let approval: ApprovalService = suspendingApproval;
    const rt = createRuntime({ tools: [remove], approval: { request: (...args) => approval.request(...args) }, telemetry: otelTelemetry(s.telemetry) });
    rt.hooks.on('tools/pre-execute', 'ask', () => ({ kind: 'ask', reason: 'removing needs a yes' }));
    const model = scriptedModel([{ toolCalls: [{ toolName: 'remove', input: { path: 'a' }, toolCallId: 'c-1' }] }, { text: 'ok' }], { modelId: 'm' });
    const first = await rt.startTurn({ model, input: 'remove a' }).done;
    expect(first.outcome).toBe('suspended');
    approval = allowAll;
    const resumed = await rt.resumeTurn({ model }).done;
    expect(resumed.outcome).toBe('completed');
    await rt.close();
    const turns = byName(s.exporter.getFinishedSpans(), 'invoke_agent dsh');
    expect(turns).toHaveLength(2);
    const [before, after] = turns.sort((a, b) => Number(attr(a, 'dsh.turn.resumed') === true) - Number(attr(b, 'dsh.turn.resumed') === true));
    expect(before!.attributes['dsh.turn.outcome']).toBe('suspended');
    expect(before!.events.find((e) => e.name === 'dsh.turn.suspended')?.attributes?.['dsh.suspended.calls']).toEqual(['c-1']);
    expect(after!.attributes).toMatchObject({ 'dsh.turn.resumed': true, 'dsh.turn.outcome': 'completed', 'dsh.turn.id': before!.attributes['dsh.turn.id'] });
    expect(after!.links.map((l) => l.context.spanId)).toEqual([before!.spanContext().spanId]);
    const calls = s.exporter.getFinishedSpans().filter((x) => x.name === 'execute_tool remove');
    const waiting = calls.find((c) => attr(c, 'dsh.call.suspended') === true)!;
    expect(waiting.events.map((e) => e.name)).toContain('dsh.approval.requested');
    expect(parentOf(waiting)).not.toBeUndefined();
    const finished = calls.find((c) => c !== waiting)!;
    expect(finished.events.find((e) => e.name === 'dsh.approval.answered')?.attributes?.['dsh.approval.answer']).toBe('allowed-once');
    expect(parentOf(finished)).toBe(after!.spanContext().spanId);
    expect(finished.attributes).not.toHaveProperty(['error.type']);
  });
});

describe('the deciding policy of a pre-execute deny (issue 27)', () => {
  it('is the listener that answered deny, not one that passed on what its next() returned', async () => {
    const s = sdk();
    const rt = createRuntime({ tools: [remove], telemetry: otelTelemetry(s.telemetry) });
    rt.hooks.on('tools/pre-execute', 'outer', async (_c, next) => next());
    rt.hooks.on('tools/pre-execute', 'inner', () => ({ kind: 'deny', reason: 'no' }));
    const model = scriptedModel([{ toolCalls: [{ toolName: 'remove', input: { path: 'a' }, toolCallId: 'c-1' }] }, { text: 'ok' }], { modelId: 'm' });
    await rt.startTurn({ model, input: 'x' }).done;
    const call = s.exporter.getFinishedSpans().find((x) => x.name === 'execute_tool remove')!;
    expect(call.attributes).toMatchObject({ 'dsh.policy.listener': 'inner', 'error.type': ErrorCode.POLICY_DENIED });
  });
});

describe('a turn whose span records nothing (issue 27)', () => {
  it('gets no child spans (sampled out: the SDK never sees them), and its metrics are still recorded', async () => {
    const s = sdk();
    const tracerProvider = new BasicTracerProvider({ sampler: new AlwaysOffSampler(), spanProcessors: [new SimpleSpanProcessor(s.exporter)] });
    const started: string[] = [];
    const tracer = tracerProvider.getTracer('off');
    const counting: otel.Tracer = {
      startSpan: (name, o, c) => (started.push(name), tracer.startSpan(name, o, c)),
      startActiveSpan: tracer.startActiveSpan.bind(tracer) as otel.Tracer['startActiveSpan'],
    };
    const rt = createRuntime({ tools: [lookup], telemetry: otelTelemetry({ ...s.telemetry, tracer: counting }) });
    const model = scriptedModel([{ toolCalls: [{ toolName: 'lookup', input: { key: 'a' }, toolCallId: 'c-1' }] }, { text: 'ok' }], { modelId: 'm' });
    expect((await rt.startTurn({ model, input: 'x' }).done).outcome).toBe('completed');
    expect(started).toEqual(['invoke_agent dsh']);
    expect(s.exporter.getFinishedSpans()).toEqual([]);
    const tool = (await s.metrics()).scopeMetrics.flatMap((m) => m.metrics).find((m) => m.descriptor.name === 'gen_ai.execute_tool.duration');
    expect(tool?.dataPoints.map((p) => p.attributes['gen_ai.tool.name'])).toEqual(['lookup']);
  });
});

describe('the global tracer with no provider registered (issue 33)', () => {
  it('records the metrics, no spans; a provider registered later traces the next turn whole, stages included', async () => {
    const s = sdk();
    const rt = createRuntime({ tools: [lookup], telemetry: otelTelemetry({ api: otel, meter: s.telemetry.meter }) });
    const turn = async (id: string) => {
      const model = scriptedModel([{ toolCalls: [{ toolName: 'lookup', input: { key: id }, toolCallId: id }] }, { text: 'ok' }], { modelId: 'm' });
      expect((await rt.startTurn({ model, input: id }).done).outcome).toBe('completed');
    };
    await turn('before');
    expect(s.exporter.getFinishedSpans()).toEqual([]);
    const tool = (await s.metrics()).scopeMetrics.flatMap((m) => m.metrics).find((m) => m.descriptor.name === 'gen_ai.execute_tool.duration');
    expect(tool?.dataPoints.map((p) => p.attributes['gen_ai.tool.name'])).toEqual(['lookup']);

    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(s.exporter)] });
    expect(otel.trace.setGlobalTracerProvider(provider)).toBe(true);
    try {
      await turn('after');
      const call = s.exporter.getFinishedSpans().find((x) => x.name === 'execute_tool lookup');
      expect(call?.attributes['gen_ai.tool.call.id']).toBe('after');
      expect(call?.events.map((e) => e.name)).toEqual(['dsh.stage.validating', 'dsh.stage.executing', 'dsh.stage.finalizing']); // no listener: no policy stage
    } finally {
      otel.trace.disable();
      await rt.close();
    }
  });

  it("with the API's no-op meter too, nothing records; a provider registered later still traces the next turn whole", async () => {
    const s = sdk();
    const rt = createRuntime({ tools: [lookup], telemetry: otelTelemetry({ api: otel, meter: otel.metrics.getMeter('dsh') }) });
    const turn = async (id: string) => {
      const model = scriptedModel([{ toolCalls: [{ toolName: 'lookup', input: { key: id }, toolCallId: id }] }, { text: 'ok' }], { modelId: 'm' });
      expect((await rt.startTurn({ model, input: id }).done).outcome).toBe('completed');
    };
    await turn('before');
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(s.exporter)] });
    expect(otel.trace.setGlobalTracerProvider(provider)).toBe(true);
    try {
      await turn('after');
      const spans = s.exporter.getFinishedSpans();
      expect(spans.map((x) => x.name).sort()).toEqual(['chat m', 'chat m', 'execute_tool lookup', 'invoke_agent dsh']);
      const call = spans.find((x) => x.name === 'execute_tool lookup');
      expect(call?.attributes['gen_ai.tool.call.id']).toBe('after');
      expect(call?.events.map((e) => e.name)).toEqual(['dsh.stage.validating', 'dsh.stage.executing', 'dsh.stage.finalizing']);
    } finally {
      otel.trace.disable();
      await rt.close();
    }
  });
});
