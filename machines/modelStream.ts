/**
 * Reads one streamed model response (`LanguageModelV3.doStream`) and reports it to the parent step
 * as events. Stopping the actor (the step leaving `requesting`) aborts the request.
 */
import type { LanguageModelV3, LanguageModelV3FunctionTool, LanguageModelV3Prompt, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { fromCallback } from 'xstate';

export interface ModelStreamInput {
  readonly model: LanguageModelV3;
  readonly prompt: LanguageModelV3Prompt;
  readonly tools: readonly LanguageModelV3FunctionTool[];
}

export type ModelStreamEvent =
  | { type: 'MODEL.TEXT'; kind: 'text' | 'reasoning'; delta: string }
  | { type: 'MODEL.TOOL_CALL'; callId: string; toolName: string; input: string }
  | { type: 'MODEL.FINISH'; finishReason: string }
  | { type: 'MODEL.ERROR'; error: unknown };

/** The unified finish reason, whether the provider sent a v3 object or a bare string. */
function finishReasonOf(part: Extract<LanguageModelV3StreamPart, { type: 'finish' }>): string {
  const r = part.finishReason as unknown;
  if (typeof r === 'string') return r;
  return (r as { unified?: string } | undefined)?.unified ?? 'other';
}

/**
 * The reason a request is aborted with when the step stops listening. Made once: `abort()` without
 * a reason builds a new DOMException (and captures a stack) every time, once per step.
 */
const STOPPED = new DOMException('the step no longer listens to this model response', 'AbortError');

export const modelStreamLogic = fromCallback<{ type: 'noop' }, ModelStreamInput>(({ input, sendBack }) => {
  const controller = new AbortController();
  let stopped = false;
  /** The response ended with its finish part: nothing is left to abort. */
  let completed = false;
  const send = (e: ModelStreamEvent) => {
    if (!stopped) sendBack(e);
  };
  (async () => {
    let finished = false;
    try {
      const { stream } = await input.model.doStream({
        prompt: input.prompt,
        tools: input.tools.length ? [...input.tools] : undefined,
        abortSignal: controller.signal,
      });
      const reader = stream.getReader();
      try {
        for (;;) {
          const { done, value: part } = await reader.read();
          if (done || controller.signal.aborted) break;
          switch (part.type) {
            case 'text-delta':
              if (part.delta) send({ type: 'MODEL.TEXT', kind: 'text', delta: part.delta });
              break;
            case 'reasoning-delta':
              if (part.delta) send({ type: 'MODEL.TEXT', kind: 'reasoning', delta: part.delta });
              break;
            case 'tool-call':
              send({ type: 'MODEL.TOOL_CALL', callId: part.toolCallId, toolName: part.toolName, input: part.input });
              break;
            case 'finish':
              finished = completed = true;
              send({ type: 'MODEL.FINISH', finishReason: finishReasonOf(part) });
              break;
            case 'error':
              finished = true;
              send({ type: 'MODEL.ERROR', error: part.error });
              break;
            default:
              break; // metadata, sources, tool-input deltas: the complete tool-call part is what counts
          }
          if (finished) break;
        }
      } finally {
        reader.releaseLock();
      }
      if (!finished) send({ type: 'MODEL.ERROR', error: new Error('the model stream ended without a finish part') });
    } catch (error) {
      send({ type: 'MODEL.ERROR', error });
    }
  })();
  return () => {
    stopped = true;
    // Aborting costs an event dispatch (tens of µs on Node 20), once per step: skipped when the
    // response has already finished (providers send the finish part once the body is consumed).
    if (!completed) controller.abort(STOPPED);
  };
});
