/**
 * What a step logs about the model itself, beside its text and calls: provider warnings (as
 * `warning` events), the end of a reasoning block with its provider metadata, and token usage.
 */
import type { LanguageModelV3Usage, SharedV3ProviderMetadata, SharedV3Warning } from '@ai-sdk/provider';
import { addTokenUsage, tokenUsageOf, type TokenUsage } from '../src/protocol/index.js';
import type { LogPort } from './commitGate.js';

/** One `warning` event (code `MODEL_WARNING`) per provider warning: unsupported settings, clamped limits. */
export function logModelWarnings(log: LogPort, turnId: string, stepIndex: number, warnings: readonly SharedV3Warning[]): void {
  for (const w of warnings) {
    log.append({ type: 'warning', turnId, stepIndex, code: 'MODEL_WARNING', message: describeWarning(w), data: { warning: jsonSafe(w) } });
  }
}

function describeWarning(w: SharedV3Warning): string {
  const r = w as { type?: unknown; feature?: unknown; details?: unknown; message?: unknown };
  const parts = [r.feature, r.details, r.message].filter((x): x is string => typeof x === 'string' && x !== '');
  return `model warning (${typeof r.type === 'string' ? r.type : 'other'}): ${parts.join(': ') || 'no details'}`.slice(0, 2000);
}

/**
 * Closes a reasoning block: the buffered reasoning plus its last `delta` is logged with the block's
 * provider metadata (an empty text when the block had none, as redacted thinking does). Buffered
 * plain text, if any, is logged first. The caller clears the buffer.
 */
export function logReasoningEnd(
  log: LogPort,
  turnId: string,
  stepIndex: number,
  buffer: { kind: 'text' | 'reasoning'; text: string } | undefined,
  delta: string,
  providerMetadata: SharedV3ProviderMetadata,
): void {
  let text = delta;
  if (buffer && buffer.text) {
    if (buffer.kind === 'reasoning') text = buffer.text + delta;
    else log.append({ type: 'llm/stream', turnId, stepIndex, kind: buffer.kind, text: buffer.text });
  }
  log.append({ type: 'llm/stream', turnId, stepIndex, kind: 'reasoning', text, providerMetadata: jsonSafe(providerMetadata) as Record<string, Record<string, unknown>> });
}

/** The step's usage after one more finished request. */
export function stepUsageAfter(usage: TokenUsage | undefined, reported: LanguageModelV3Usage | undefined): TokenUsage | undefined {
  return reported ? addTokenUsage(usage, tokenUsageOf(reported)) : usage;
}

/** A plain-JSON copy (providers may hand over class instances or undefined fields); `{}` if it cannot be copied (`JSON.parse` of no JSON throws). */
function jsonSafe(value: unknown): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(JSON.stringify(value));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
