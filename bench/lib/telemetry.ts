/**
 * The telemetry W1 attaches for its telemetry rows (issue 27), with the official SDK as `dsh run
 * --otel` sets it up, minus the network: a BasicTracerProvider with a BatchSpanProcessor whose
 * exporter counts the spans it is handed and drops them, a MeterProvider whose reader holds the
 * aggregations (never exported). `noopTelemetry`: `@opentelemetry/api` with no provider registered
 * (its tracer and meter are the API's no-ops), what a web app that passes the global API gets
 * before it registers an SDK.
 */
import * as otel from '@opentelemetry/api';
import { AggregationTemporality, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { TelemetryOptions } from '../../src/runtime/telemetry/telemetryOptions.js';

class CountingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    this.spans += spans.length;
    done({ code: 0 }); // ExportResultCode.SUCCESS
  }
  async shutdown(): Promise<void> {}
}

class HeldReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

let sdk: TelemetryOptions | undefined;
/** One SDK setup for the whole bench run (as one process has one). */
export function sdkTelemetry(): TelemetryOptions {
  if (sdk) return sdk;
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new CountingExporter())] });
  const meterProvider = new MeterProvider({ readers: [new HeldReader()] });
  sdk = { api: otel, tracer: tracerProvider.getTracer('dsh'), meter: meterProvider.getMeter('dsh'), conversationId: 'bench' };
  return sdk;
}

/** The API with no provider registered: every span and instrument a no-op. */
export const noopTelemetry = (): TelemetryOptions => ({ api: otel, meter: otel.metrics.getMeter('dsh') });
