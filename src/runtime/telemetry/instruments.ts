/**
 * The GenAI metrics dsh records on an injected meter: `gen_ai.execute_tool.duration` (seconds, by
 * tool and outcome: `error.type` is the call's error code, absent when it succeeded),
 * `gen_ai.client.operation.duration` (seconds, per model request and per turn) and
 * `gen_ai.client.token.usage` (tokens per request, by `gen_ai.token.type` input / output).
 * Browser-safe (types only from `@opentelemetry/api`).
 */
import type { Attributes, Histogram, Meter } from '@opentelemetry/api';
import { Metric } from './attributes.js';

/** The conventions' advised bucket boundaries (seconds) for durations, and (tokens) for usage. */
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

export interface Instruments {
  toolDuration(seconds: number, attributes: Attributes): void;
  operationDuration(seconds: number, attributes: Attributes): void;
  tokenUsage(tokens: number, attributes: Attributes): void;
}

export function createInstruments(meter: Meter): Instruments {
  const histogram = (name: string, unit: string, description: string, buckets: number[]): Histogram =>
    meter.createHistogram(name, { unit, description, advice: { explicitBucketBoundaries: buckets } });
  const tool = histogram(Metric.executeToolDuration, 's', 'Duration of tool executions', DURATION_BUCKETS);
  const operation = histogram(Metric.operationDuration, 's', 'GenAI operation duration', DURATION_BUCKETS);
  const tokens = histogram(Metric.tokenUsage, '{token}', 'Number of input and output tokens used', TOKEN_BUCKETS);
  return {
    toolDuration: (s, a) => tool.record(Math.max(0, s), a),
    operationDuration: (s, a) => operation.record(Math.max(0, s), a),
    tokenUsage: (n, a) => tokens.record(n, a),
  };
}
