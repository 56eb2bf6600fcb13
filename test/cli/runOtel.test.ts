/**
 * Issue 27: `dsh run --otel` (and a config `otel` block) export the turn over OTLP/HTTP through
 * the official SDK packages. A loopback OTLP/HTTP receiver written here (node:http on 127.0.0.1)
 * takes what the exporters POST to /v1/traces and /v1/metrics (OTLP JSON), decodes it, and finds
 * the turn's spans; a Ctrl-C during the turn still gets them out before the process exits.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackServer, type LoopbackServer } from '../model/wire/loopbackServer.js';
import { startDsh, testEnv, waitFor } from './spawnDsh.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  events?: Array<{ name: string; attributes?: OtlpAttribute[] }>;
  status?: { code?: number };
}
interface Received {
  path: string;
  contentType: string | undefined;
  body: unknown;
}

const plain = (v: OtlpValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue ?? v.arrayValue?.values?.map(plain);
const attrs = (list: OtlpAttribute[] | undefined): Record<string, unknown> => Object.fromEntries((list ?? []).map((a) => [a.key, plain(a.value)]));

/** The loopback receiver (test/model/wire/loopbackServer.ts, answering `{}` to every POST): what arrived, decoded from OTLP JSON. */
const receiver = () => startLoopbackServer({ fallback: { kind: 'json', status: 200, body: {} } });
const receivedBy = (rx: LoopbackServer): Received[] => rx.requests.map((r) => ({ path: r.url, contentType: r.headers['content-type'], body: r.body }));

function spansOf(received: readonly Received[]): Array<OtlpSpan & { resource: Record<string, unknown> }> {
  const out: Array<OtlpSpan & { resource: Record<string, unknown> }> = [];
  for (const r of received) {
    if (r.path !== '/v1/traces') continue;
    const body = r.body as { resourceSpans?: Array<{ resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> };
    for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) out.push({ ...s, resource: attrs(rs.resource?.attributes) });
  }
  return out;
}

const metricNames = (received: readonly Received[]): string[] =>
  received
    .filter((r) => r.path === '/v1/metrics')
    .flatMap((r) => ((r.body as { resourceMetrics?: Array<{ scopeMetrics?: Array<{ metrics?: Array<{ name: string }> }> }> }).resourceMetrics ?? []))
    .flatMap((rm) => rm.scopeMetrics ?? [])
    .flatMap((sm) => sm.metrics ?? [])
    .map((m) => m.name);

let rx: Awaited<ReturnType<typeof receiver>>;
const dirs: string[] = [];
beforeAll(async () => {
  rx = await receiver();
});
afterAll(async () => {
  await rx.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function workspace(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-otel-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'README.md'), '# A project\n\nSome text to read.\n');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const otelEnv = (extra: Record<string, string> = {}) => {
  const env = testEnv(extra);
  for (const k of Object.keys(env)) if (k.startsWith('OTEL_') && !(k in extra)) delete env[k];
  return env;
};

describe('dsh run --otel (issue 27)', () => {
  it("exports the turn's spans and metrics to an OTLP/HTTP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT)", async () => {
    rx.requests.length = 0;
    const dir = workspace();
    const run = await startDsh(dir, ['run', '--otel', '--model', 'embedded', 'look around'], otelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: rx.url })).done;
    expect(run.err).not.toMatch(/--otel needs/);
    expect(run.code, run.err).toBe(0);
    const sessionId = /session (\S+): /.exec(run.out)?.[1];
    expect(sessionId).toBeDefined();
    expect(receivedBy(rx).filter((r) => r.path === '/v1/traces').every((r) => r.contentType?.startsWith('application/json'))).toBe(true);
    const spans = spansOf(receivedBy(rx));
    const turn = spans.find((s) => s.name === 'invoke_agent dsh');
    expect(turn, `spans received: ${spans.map((s) => s.name).join(', ')}`).toBeDefined();
    expect(turn!.resource['service.name']).toBe('dsh');
    expect(attrs(turn!.attributes)).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.conversation.id': sessionId, 'dsh.turn.outcome': 'completed' });
    const chats = spans.filter((s) => s.name.startsWith('chat '));
    expect(chats.length).toBeGreaterThanOrEqual(2);
    for (const c of chats) {
      expect(c.parentSpanId).toBe(turn!.spanId);
      expect(attrs(c.attributes)['gen_ai.operation.name']).toBe('chat');
    }
    const tools = spans.filter((s) => s.name.startsWith('execute_tool '));
    // The embedded model reads, greps and globs in parallel: three calls under the same request.
    const names = tools.map((t) => attrs(t.attributes)['gen_ai.tool.name']);
    expect(names).toEqual(expect.arrayContaining(['read', 'grep', 'glob']));
    const parallel = tools.filter((t) => ['read', 'grep', 'glob'].includes(String(attrs(t.attributes)['gen_ai.tool.name'])));
    expect(new Set(parallel.map((t) => t.parentSpanId)).size).toBe(1);
    expect(chats.map((c) => c.spanId)).toContain(parallel[0]!.parentSpanId);
    for (const t of tools) expect(attrs(t.attributes)['gen_ai.tool.call.id']).toEqual(expect.any(String));
    // No terminal to ask: the edit is denied, and its span says so with dsh's error code.
    const edit = tools.find((t) => attrs(t.attributes)['gen_ai.tool.name'] === 'edit');
    expect(edit).toBeDefined();
    expect(attrs(edit!.attributes)['error.type']).toBe('APPROVAL_DENIED');
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(metricNames(receivedBy(rx))).toEqual(expect.arrayContaining(['gen_ai.execute_tool.duration', 'gen_ai.client.operation.duration']));
  });

  it('exports with a config "otel" block alone (its endpoint), no flag', async () => {
    rx.requests.length = 0;
    const dir = workspace({ 'dsh.config.json': JSON.stringify({ otel: { endpoint: rx.url, serviceName: 'dsh-under-test' } }) });
    const run = await startDsh(dir, ['run', '--model', 'embedded', 'look around'], otelEnv()).done;
    expect(run.code, run.err).toBe(0);
    const spans = spansOf(receivedBy(rx));
    const turn = spans.find((s) => s.name === 'invoke_agent dsh');
    expect(turn).toBeDefined();
    expect(turn!.resource['service.name']).toBe('dsh-under-test');
  });

  it('flushes the spans on Ctrl-C: the cancelled turn arrives before the process exits', async () => {
    rx.requests.length = 0;
    // A scripted model that streams slowly, so the turn is running when SIGINT comes.
    const dir = workspace({ 'slow.json': JSON.stringify([{ text: Array.from({ length: 200 }, (_, i) => `word${i} `), chunkDelayMs: 200 }]) });
    const started = startDsh(dir, ['run', '--otel', '--model', 'scripted:slow.json', 'talk'], otelEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: rx.url }));
    await waitFor(() => /step\/start|step 0/.test(started.out()) || undefined, 'the first step to start');
    started.child.kill('SIGINT');
    const run = await started.done;
    expect(run.code, run.err).toBe(130);
    const turn = spansOf(receivedBy(rx)).find((s) => s.name === 'invoke_agent dsh');
    expect(turn).toBeDefined();
    expect(attrs(turn!.attributes)).toMatchObject({ 'dsh.turn.outcome': 'cancelled', 'error.type': 'cancelled' });
  });
});
