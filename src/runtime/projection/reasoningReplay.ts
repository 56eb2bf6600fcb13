/**
 * Reasoning blocks to replay to the model. A block is replayed only when it closed with provider
 * metadata (Anthropic's thinking signature or redacted data): Anthropic requires the signed
 * thinking block to come back with its `tool_use`, and reasoning without a signature is rejected
 * or dropped by most APIs, so it is not replayed (nor is any reasoning in logs written before).
 */
import type { LanguageModelV3ReasoningPart, SharedV3ProviderOptions } from '@ai-sdk/provider';
import type { LogEventOf } from '../../protocol/index.js';

export class ReasoningReplay {
  private open = '';
  private readonly closed: LanguageModelV3ReasoningPart[] = [];

  /** One `llm/stream` reasoning event, in log order. */
  add(event: LogEventOf<'llm/stream'>): void {
    if (event.kind !== 'reasoning') return;
    this.open += event.text;
    if (event.providerMetadata === undefined) return;
    this.closed.push({ type: 'reasoning', text: this.open, providerOptions: event.providerMetadata as SharedV3ProviderOptions });
    this.open = '';
  }

  /** A failed attempt's reasoning never reached the model's history. */
  reset(): void {
    this.open = '';
    this.closed.length = 0;
  }

  parts(): readonly LanguageModelV3ReasoningPart[] {
    return this.closed;
  }

  /** Plain data, for a checkpoint. */
  toJSON(): { open: string; closed: LanguageModelV3ReasoningPart[] } {
    return { open: this.open, closed: [...this.closed] };
  }

  static from(state: { open: string; closed: readonly LanguageModelV3ReasoningPart[] }): ReasoningReplay {
    const r = new ReasoningReplay();
    r.open = state.open;
    r.closed.push(...state.closed);
    return r;
  }
}
