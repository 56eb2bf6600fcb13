/**
 * The model's view of a session: a pure function from the log to the `LanguageModelV3` prompt.
 * Every request's prompt is derived from the log, so compaction, replay and resume all see the
 * same messages; the runtime keeps the projection as events arrive (promptState.ts) rather than
 * re-deriving it from the whole log per request.
 */
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { LogEvent } from '../../protocol/index.js';
import { PromptProjection, type ProjectPromptOptions } from './promptState.js';

/** Builds the prompt the model is sent, from the session log alone (see promptState.ts). */
export function projectPrompt(events: readonly LogEvent[], options: ProjectPromptOptions = {}): LanguageModelV3Prompt {
  const projection = new PromptProjection();
  for (const event of events) projection.apply(event);
  return projection.render(options);
}
