/** OpenTelemetry traces and metrics of a runtime, in the GenAI semantic conventions (docs/telemetry.md). Browser-safe. */
export { createTelemetryProjection, otelTelemetry, providerName } from './telemetryProjection.js';
export { observeModel, type ModelRequestListener, type ModelRequestWatch } from './observeModel.js';
export type { OtelApi, Telemetry, TelemetryOptions, TelemetryProjection } from './telemetryOptions.js';
