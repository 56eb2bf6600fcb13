/**
 * OTLP over HTTP (JSON) for `dsh run --otel` / `dsh resume --otel` and a config `otel` block: the
 * official OpenTelemetry SDK packages, loaded only when asked for, a tracer provider with a batch
 * span processor and a meter provider with a periodic reader, each with its OTLP/HTTP exporter.
 *
 * Where to: the standard `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` /
 * `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` and `OTEL_EXPORTER_OTLP_HEADERS` (read by the exporters
 * themselves) win; else the config's `endpoint` (the collector's base URL: `/v1/traces` and
 * `/v1/metrics` are appended); else the SDK's default, http://localhost:4318. The resource is
 * `service.name` (`OTEL_SERVICE_NAME`, else the config's `serviceName`, else `dsh`) and
 * `service.version`, with `OTEL_RESOURCE_ATTRIBUTES` merged in.
 *
 * The providers are this run's own (nothing is registered globally). `shutdown` flushes both within
 * a deadline, and says in one line when the export failed or the collector did not answer in time:
 * every export request is itself bounded by `exportTimeoutMs` (the exporters abort it), so a
 * collector that accepts and never answers cannot keep the process alive past the deadline.
 */
import { otelTelemetry } from '../../runtime/telemetry/telemetryProjection.js';
import type { Telemetry, TelemetryOptions } from '../../runtime/telemetry/telemetryOptions.js';

/** The config's `otel` block (src/config/schema.ts). */
export interface OtlpTelemetryConfig {
  readonly enabled?: boolean;
  readonly endpoint?: string;
  readonly serviceName?: string;
  readonly recordContent?: boolean;
}

export interface OtlpTelemetry {
  /** For `createRuntime({ telemetry })`. */
  readonly telemetry: Telemetry;
  /** What `telemetry` was made of: the tracer, the meter and the settings. */
  readonly options: TelemetryOptions;
  /**
   * Exports what is buffered and stops both providers; settles within `deadlineMs` whatever the
   * collector does, with one line saying what went wrong (an export failed, or the collector did
   * not answer in time), or undefined when everything was exported.
   */
  shutdown(deadlineMs: number): Promise<string | undefined>;
}

/** The packages `--otel` loads, pinned as package.json pins them (optionalDependencies). */
export const OTEL_PACKAGES = [
  '@opentelemetry/api@1.9.1',
  '@opentelemetry/sdk-trace-base@2.12.0',
  '@opentelemetry/sdk-metrics@2.12.0',
  '@opentelemetry/resources@2.12.0',
  '@opentelemetry/exporter-trace-otlp-http@0.223.0',
  '@opentelemetry/exporter-metrics-otlp-http@0.223.0',
] as const;

/** `--otel` without the SDK packages installed (`npm install --omit=optional`): one line saying what to install. */
export class OtelUnavailableError extends Error {
  constructor(missing: string) {
    super(`--otel needs the OpenTelemetry SDK packages (${missing} is missing): npm install ${OTEL_PACKAGES.join(' ')}`);
    this.name = 'OtelUnavailableError';
  }
}

async function load<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') throw new OtelUnavailableError(name);
    throw e;
  }
}

const joinPath = (base: string, path: string) => `${base.replace(/\/+$/, '')}${path}`;

/** Starts the SDK: throws OtelUnavailableError when its packages are not installed. */
export async function startOtlpTelemetry(o: {
  readonly config?: OtlpTelemetryConfig;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `gen_ai.conversation.id`: the session's id. */
  readonly conversationId?: string;
  readonly serviceVersion?: string;
  /** The longest one export request may take (default 5 s, dsh run's close deadline). */
  readonly exportTimeoutMs?: number;
}): Promise<OtlpTelemetry> {
  const api = await load('@opentelemetry/api', () => import('@opentelemetry/api'));
  const traceBase = await load('@opentelemetry/sdk-trace-base', () => import('@opentelemetry/sdk-trace-base'));
  const metricsSdk = await load('@opentelemetry/sdk-metrics', () => import('@opentelemetry/sdk-metrics'));
  const resources = await load('@opentelemetry/resources', () => import('@opentelemetry/resources'));
  const { OTLPTraceExporter } = await load('@opentelemetry/exporter-trace-otlp-http', () => import('@opentelemetry/exporter-trace-otlp-http'));
  const { OTLPMetricExporter } = await load('@opentelemetry/exporter-metrics-otlp-http', () => import('@opentelemetry/exporter-metrics-otlp-http'));

  const env = o.env;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT ? undefined : o.config?.endpoint;
  const tracesUrl = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || !base ? undefined : joinPath(base, '/v1/traces');
  const metricsUrl = env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT || !base ? undefined : joinPath(base, '/v1/metrics');

  const resource = resources
    .resourceFromAttributes({
      'service.name': env.OTEL_SERVICE_NAME || o.config?.serviceName || 'dsh',
      ...(o.serviceVersion ? { 'service.version': o.serviceVersion } : {}),
    })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));

  // The first failed export, as one line (the SDK only logs them to its diag logger).
  let failure: string | undefined;
  const watch = <T, E extends { export(items: T, done: (r: { code: number; error?: Error }) => void): void }>(what: string, exporter: E): E => {
    const send = exporter.export.bind(exporter);
    exporter.export = (items, done) =>
      send(items, (r) => {
        if (r.code !== 0) failure ??= `${what} export failed: ${r.error?.message ?? 'the collector refused it'}`;
        done(r);
      });
    return exporter;
  };
  const timeoutMillis = o.exportTimeoutMs ?? 5_000;
  const traceExporter = watch('span', new OTLPTraceExporter({ ...(tracesUrl ? { url: tracesUrl } : {}), timeoutMillis }));
  const metricExporter = watch('metric', new OTLPMetricExporter({ ...(metricsUrl ? { url: metricsUrl } : {}), timeoutMillis }));
  const tracerProvider = new traceBase.BasicTracerProvider({
    resource,
    spanProcessors: [new traceBase.BatchSpanProcessor(traceExporter, { exportTimeoutMillis: timeoutMillis })],
  });
  const meterProvider = new metricsSdk.MeterProvider({
    resource,
    readers: [
      new metricsSdk.PeriodicExportingMetricReader({
        exporter: metricExporter,
        exportIntervalMillis: 60_000,
        exportTimeoutMillis: timeoutMillis,
      }),
    ],
  });
  const scope = { name: 'dsh', ...(o.serviceVersion ? { version: o.serviceVersion } : {}) };
  const options: TelemetryOptions = {
    api,
    tracer: tracerProvider.getTracer(scope.name, scope.version),
    meter: meterProvider.getMeter(scope.name, scope.version),
    ...(o.config?.recordContent ? { recordContent: true } : {}),
    ...(o.conversationId !== undefined ? { conversationId: o.conversationId } : {}),
  };
  let stopped: Promise<string | undefined> | undefined;
  return {
    options,
    telemetry: otelTelemetry(options),
    shutdown(deadlineMs) {
      stopped ??= new Promise<string | undefined>((resolve) => {
        const timer = setTimeout(() => resolve(failure ?? `the collector did not answer within ${deadlineMs / 1000} s: spans and metrics not exported`), deadlineMs);
        timer.unref?.();
        // shutdown() flushes first (the batch processor's spans, the reader's last collection).
        void Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]).then((settled) => {
          clearTimeout(timer);
          const rejected = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
          resolve(failure ?? (rejected ? `export failed: ${String((rejected.reason as Error)?.message ?? rejected.reason)}` : undefined));
        });
      });
      return stopped;
    },
  };
}
