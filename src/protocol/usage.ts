import * as z from 'zod';

/**
 * Tokens a model reported for its requests (summed over a step's requests on `step/end`). Every
 * field is optional: providers report what they know.
 */
export const TokenUsageSchema = z.object({
  inputTokens: z.number().nonnegative().optional(),
  outputTokens: z.number().nonnegative().optional(),
  /** Part of `outputTokens` spent on reasoning. */
  reasoningTokens: z.number().nonnegative().optional(),
  /** Part of `inputTokens` read from the provider's prompt cache. */
  cacheReadTokens: z.number().nonnegative().optional(),
  /** Part of `inputTokens` written to the provider's prompt cache. */
  cacheWriteTokens: z.number().nonnegative().optional(),
  /** Model requests whose usage is summed here. */
  requests: z.number().int().nonnegative().optional(),
});
/** Token counts of a model request (input, output, cached, reasoning), as providers report them. */
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

const FIELDS = ['inputTokens', 'outputTokens', 'reasoningTokens', 'cacheReadTokens', 'cacheWriteTokens', 'requests'] as const;

/** Field-by-field sum; a field known on neither side stays absent. */
export function addTokenUsage(a: TokenUsage | undefined, b: TokenUsage | undefined): TokenUsage | undefined {
  if (!a) return b;
  if (!b) return a;
  const out: TokenUsage = {};
  for (const f of FIELDS) {
    const x = a[f];
    const y = b[f];
    if (x !== undefined || y !== undefined) out[f] = (x ?? 0) + (y ?? 0);
  }
  return out;
}

/** One request's usage from an AI SDK v3 `finish` part (`{ inputTokens: { total, … }, outputTokens: { … } }`). */
export function tokenUsageOf(usage: unknown): TokenUsage {
  const u = (typeof usage === 'object' && usage !== null ? usage : {}) as Record<string, unknown>;
  const input = (typeof u.inputTokens === 'object' && u.inputTokens !== null ? u.inputTokens : {}) as Record<string, unknown>;
  const output = (typeof u.outputTokens === 'object' && u.outputTokens !== null ? u.outputTokens : {}) as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
  const out: TokenUsage = { requests: 1 };
  const set = (k: keyof TokenUsage, v: unknown) => {
    const x = n(v);
    if (x !== undefined) out[k] = x;
  };
  set('inputTokens', input.total);
  set('outputTokens', output.total);
  set('reasoningTokens', output.reasoning);
  set('cacheReadTokens', input.cacheRead);
  set('cacheWriteTokens', input.cacheWrite);
  return out;
}
