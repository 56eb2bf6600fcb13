/**
 * What a runtime's telemetry is made of, all injected: the `@opentelemetry/api` module (for its
 * `trace.setSpan` and `context.active`), a tracer, a meter. dsh imports only types from
 * `@opentelemetry/api` (an optional peer), so a runtime without telemetry never loads it, and a
 * web app passes its own. Browser-safe.
 */
import type { ContextAPI, Meter, TraceAPI, Tracer } from '@opentelemetry/api';
import type { LogEvent } from '../../protocol/index.js';
import type { Clock } from '../clock.js';
import type { CallStageEvent } from '../inspection/stageEvents.js';
import type { ModelRequestListener } from './observeModel.js';

/** The parts of `@opentelemetry/api` the projection calls (`import * as otel from '@opentelemetry/api'` has them). */
export interface OtelApi {
  /**
   * `getTracerProvider` (optional) lets the projection see that no provider is registered, so
   * that a runtime whose spans would all be no-ops does not observe its calls' stages.
   */
  readonly trace: Pick<TraceAPI, 'setSpan' | 'getTracer'> & Partial<Pick<TraceAPI, 'getTracerProvider'>>;
  readonly context: Pick<ContextAPI, 'active'>;
  /**
   * `createNoopMeter` (optional) lets the projection see that its meter is the API's no-op one (what
   * `metrics.getMeter()` gives while no meter provider is registered, and keeps giving), so that a
   * runtime that would record nothing at all feeds its projection nothing.
   */
  readonly createNoopMeter?: () => Meter;
}

/** What `otelTelemetry` needs: the `@opentelemetry/api` module, a tracer and a meter. */
export interface TelemetryOptions {
  /** `import * as otel from '@opentelemetry/api'`: the projection parents spans with its `trace.setSpan`. */
  readonly api: OtelApi;
  /** Where spans go (default: `api.trace.getTracer('dsh')`, the global provider's). */
  readonly tracer?: Tracer;
  /** Where the GenAI metrics go; absent, no metrics are recorded. */
  readonly meter?: Meter;
  /**
   * Record call arguments and results (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`)
   * and deny reasons (`dsh.policy.reason`) on the spans. Off by default: the conventions make
   * content opt-in, since it may hold secrets.
   */
  readonly recordContent?: boolean;
  /** `gen_ai.agent.name` (and the `invoke_agent {name}` span name); default `dsh`. */
  readonly agentName?: string;
  /** `gen_ai.conversation.id` on every span: the session's id (`dsh run` sets it). */
  readonly conversationId?: string;
}

/** What a runtime feeds its telemetry: the log's events, the stage stream, the model requests. */
export interface TelemetryProjection {
  /** Feed every log event, in order (the runtime subscribes it to its log). */
  onEvent(event: LogEvent): void;
  /** Feed every stage event (the runtime subscribes it to its stage stream while `tracing()`). */
  onStage(event: CallStageEvent): void;
  /**
   * Whether spans can record now (stage events only ever annotate spans). The runtime asks when
   * it is made and at each `turn/start`, and hears the stage stream only while this is true; absent,
   * always.
   */
  tracing?(): boolean;
  /**
   * Whether metrics are recorded (a meter was given, and not the API's no-op one). While neither
   * this nor `tracing()` holds, the runtime feeds the projection no log event (it asks again at
   * each `turn/start`, so a turn is projected whole or not at all); absent, always fed.
   */
  readonly metering?: boolean;
  /** Hears the model requests (give it to `observeModel`). */
  readonly onRequest: ModelRequestListener;
  /** Ends every span still open (a run that stops mid-turn), marked unfinished. */
  close(): void;
}

/**
 * `createRuntime({ telemetry })`: makes the runtime's projection on its clock. `otelTelemetry`
 * (the `dsh/telemetry` entry) makes one for OpenTelemetry; the projection's code is in that entry,
 * not in `dsh`, so a page without telemetry does not ship it.
 */
export type Telemetry = (deps: { readonly clock: Clock }) => TelemetryProjection;
