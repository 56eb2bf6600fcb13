/**
 * The per-request settings a step passes to `doStream` besides prompt, tools and abort signal:
 * output-token limit, sampling, tool choice, provider options and headers. Set once in the runtime
 * config and per turn; the turn's value wins field by field.
 */
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';

/** Per-request settings for the model (`maxOutputTokens`, sampling, `toolChoice`, `providerOptions`, `headers`); a turn's win over the runtime's, field by field. */
export type ModelCallOptions = Partial<
  Pick<
    LanguageModelV3CallOptions,
    'maxOutputTokens' | 'temperature' | 'topP' | 'topK' | 'stopSequences' | 'seed' | 'presencePenalty' | 'frequencyPenalty' | 'toolChoice' | 'providerOptions' | 'headers'
  >
>;

const KEYS = ['maxOutputTokens', 'temperature', 'topP', 'topK', 'stopSequences', 'seed', 'presencePenalty', 'frequencyPenalty', 'toolChoice', 'providerOptions', 'headers'] as const;

/** `override` over `base`, field by field; `headers` and `providerOptions` are merged one level deep. */
export function mergeModelCallOptions(base: ModelCallOptions | undefined, override: ModelCallOptions | undefined): ModelCallOptions {
  const out: Record<string, unknown> = {};
  for (const key of KEYS) {
    const b = base?.[key];
    const o = override?.[key];
    if (o === undefined) {
      if (b !== undefined) out[key] = b;
    } else if (key === 'headers' || key === 'providerOptions') {
      out[key] = { ...(b as object), ...(o as object) };
    } else out[key] = o;
  }
  return out as ModelCallOptions;
}
