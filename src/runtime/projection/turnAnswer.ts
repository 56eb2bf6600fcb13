/**
 * A finished turn's answer, projected from the log: the text of its last step (the model's final
 * message; text of a failed attempt is dropped, as in the prompt) and the tokens of all its steps.
 */
import { addTokenUsage, type LogEvent, type TokenUsage } from '../../protocol/index.js';

/** A turn's final text and token usage. */
export interface TurnAnswer {
  /** The model's text in the turn's last step ('' when it said nothing there). */
  readonly text: string;
  /** Tokens reported over the turn's steps; absent when the provider reported none. */
  readonly usage?: TokenUsage;
}

/** The answer text and summed usage of one turn. */
export function turnAnswer(events: readonly LogEvent[], turnId: string): TurnAnswer {
  const texts = new Map<number, string>();
  let last = -1;
  let usage: TokenUsage | undefined;
  for (const e of events) {
    if (!('turnId' in e) || e.turnId !== turnId) continue;
    switch (e.type) {
      case 'step/start':
        last = Math.max(last, e.stepIndex);
        texts.set(e.stepIndex, '');
        break;
      case 'llm/stream':
        if (e.kind === 'text') texts.set(e.stepIndex, (texts.get(e.stepIndex) ?? '') + e.text);
        break;
      case 'agent/request-error':
        texts.set(e.stepIndex, '');
        break;
      case 'step/end':
        usage = addTokenUsage(usage, e.usage);
        break;
      default:
        break;
    }
  }
  return { text: texts.get(last) ?? '', ...(usage ? { usage } : {}) };
}
