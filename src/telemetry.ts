/**
 * `dsh/telemetry`: OpenTelemetry spans and metrics in the GenAI conventions (docs/telemetry.md),
 * browser-safe: `createRuntime({ telemetry: otelTelemetry({ api, tracer, meter }) })`. Not in `dsh`
 * so that a page without telemetry does not ship the projection; `dsh/node` re-exports it.
 *
 * @packageDocumentation
 */
export { otelTelemetry } from './runtime/telemetry/telemetryProjection.js';
export type { OtelApi, Telemetry, TelemetryOptions, TelemetryProjection } from './runtime/telemetry/telemetryOptions.js';
export type { ModelRequestListener, ModelRequestWatch } from './runtime/telemetry/observeModel.js';
