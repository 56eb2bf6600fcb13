/**
 * startOtlpTelemetry (issue 27): the official SDK's OTLP/HTTP exporters, pointed at the config's
 * endpoint, deliver spans and metrics to a loopback receiver on shutdown; a collector that never
 * answers cannot hold shutdown past its deadline.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { OTEL_PACKAGES, OtelUnavailableError, startOtlpTelemetry } from '../../../src/adapters/telemetry/otlpTelemetry.js';

const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) s.close();
});

function listen(answer: boolean): Promise<{ url: string; paths: string[]; bodies: string[] }> {
  const paths: string[] = [];
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      paths.push(req.url ?? '');
      bodies.push(body);
      if (answer) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      // else: never answered
    });
  });
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths, bodies })));
}

// The standard variables would win over the config's endpoint: none is set for these tests.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
const noOtelEnv = !Object.keys(process.env).some((k) => k.startsWith('OTEL_EXPORTER_OTLP'));

describe('startOtlpTelemetry', () => {
  it.runIf(noOtelEnv)("exports to the config's endpoint (/v1/traces, /v1/metrics) when shut down", async () => {
    const rx = await listen(true);
    const otel = await startOtlpTelemetry({ config: { endpoint: `${rx.url}/` }, env, conversationId: 's-1', serviceVersion: '9.9.9' });
    const span = otel.options.tracer!.startSpan('invoke_agent dsh', { attributes: { 'gen_ai.operation.name': 'invoke_agent' } });
    span.end();
    otel.options.meter!.createHistogram('gen_ai.execute_tool.duration', { unit: 's' }).record(0.5, { 'gen_ai.tool.name': 'read' });
    expect(otel.options.conversationId).toBe('s-1');
    expect(otel.options.recordContent).toBeUndefined();
    await otel.shutdown(30_000);
    expect([...rx.paths].sort()).toEqual(['/v1/metrics', '/v1/traces']);
    const traces = JSON.parse(rx.bodies[rx.paths.indexOf('/v1/traces')]!) as { resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans: Array<{ spans: Array<{ name: string }> }> }> };
    expect(traces.resourceSpans[0]!.scopeSpans[0]!.spans.map((s) => s.name)).toEqual(['invoke_agent dsh']);
    const resource = Object.fromEntries(traces.resourceSpans[0]!.resource.attributes.map((a) => [a.key, a.value.stringValue]));
    expect(resource).toMatchObject({ 'service.name': 'dsh', 'service.version': '9.9.9' });
  });

  it.runIf(noOtelEnv)('settles by its deadline when the collector never answers', async () => {
    const rx = await listen(false);
    const otel = await startOtlpTelemetry({ config: { endpoint: rx.url, recordContent: true }, env });
    expect(otel.options.recordContent).toBe(true);
    otel.options.tracer!.startSpan('x').end();
    await otel.shutdown(300);
    expect(rx.paths).toContain('/v1/traces');
  });

  it('names every package to install when the SDK is missing, in one line', () => {
    const e = new OtelUnavailableError('@opentelemetry/sdk-trace-base');
    expect(e.message).not.toContain('\n');
    for (const p of OTEL_PACKAGES) expect(e.message).toContain(p);
  });
});
