/** OpenTelemetry traces and metrics of a runtime, in the GenAI semantic conventions (docs/telemetry.md). Browser-safe. */
export { createTelemetryProjection, providerName, type TelemetryProjection } from './telemetryProjection.js';
export { observeModel, type ModelRequestListener, type ModelRequestWatch } from './observeModel.js';
export type { OtelApi, TelemetryOptions } from './telemetryOptions.js';
