/**
 * Reads one streamed model response (`LanguageModelV3.doStream`) and reports it to the parent step
 * as events. Stopping the actor (the step leaving `requesting`) aborts the request.
 */
import type {
  LanguageModelV3,
  LanguageModelV3FunctionTool,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
  SharedV3Warning,
} from '@ai-sdk/provider';
import { fromCallback } from 'xstate';
import type { ModelCallOptions } from './modelCallOptions.js';
import { ToolInputTracker, type ReadyToolCall } from './toolInputTracker.js';

/** One model request: the model, the projected prompt, the tools' declarations and the request settings. */
export interface ModelStreamInput {
  readonly model: LanguageModelV3;
  readonly prompt: LanguageModelV3Prompt;
  readonly tools: readonly LanguageModelV3FunctionTool[];
  /** Output-token limit, sampling, tool choice, provider options, headers. */
  readonly callOptions?: ModelCallOptions;
  /** Told the provider's warnings for this request as they arrive (the step logs them). */
  readonly onWarnings?: (warnings: readonly SharedV3Warning[]) => void;
}

/** What the model stream actor sends its step: text and reasoning deltas, tool calls as their input completes, the finish, or an error. */
export type ModelStreamEvent =
  /**
   * Streamed text or reasoning. `providerMetadata` (reasoning only) closes the block: the block's
   * metadata (e.g. Anthropic's thinking signature) that must be replayed with it.
   */
  | { type: 'MODEL.TEXT'; kind: 'text' | 'reasoning'; delta: string; providerMetadata?: SharedV3ProviderMetadata }
  /**
   * Tool calls whose input is complete, in the model's order: every call that became ready in one
   * burst of the stream (parts the stream already held), so the step and the scheduler take them
   * in one event each instead of one per call. (The one-call form is accepted too.)
   */
  | { type: 'MODEL.TOOL_CALL'; calls: readonly ReadyToolCall[] }
  | ({ type: 'MODEL.TOOL_CALL' } & ReadyToolCall)
  | { type: 'MODEL.FINISH'; finishReason: string; usage?: LanguageModelV3Usage }
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

/** Most ready calls held for one report, however many parts the stream has at hand. */
export const MAX_HELD_CALLS = 64;

/**
 * Microtask turns a read may take and still count as "at hand": a stream's own plumbing (a pull,
 * a transform or two) settles a read of a part it already holds within a few (the scripted
 * model's takes 2); a read that waits for the network takes a macrotask at least.
 */
const AT_HAND_TICKS = 8;

/**
 * Whether a read settles without waiting for anything outside this turn of the event loop: true
 * when the stream held a part (or its end) when it was asked. Costs at most `AT_HAND_TICKS`
 * microtask turns, and only while calls are held. A stream's parts that arrive together (one
 * network chunk, a scripted response) are read this way; a read that has to wait is not.
 */
async function settlesAtHand(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  const mark = () => {
    settled = true;
  };
  p.then(mark, mark);
  // Stryker disable next-line EqualityOperator: one microtask turn more of patience changes no order: the bound only has to tell a part at hand from one that waits for I/O
  for (let i = 0; i < AT_HAND_TICKS && !settled; i++) await null;
  return settled;
}

export const modelStreamLogic = fromCallback<{ type: 'noop' }, ModelStreamInput>(({ input, sendBack }) => {
  const controller = new AbortController();
  /** The response ended with its finish part: nothing is left to abort. */
  let completed = false;
  /**
   * Calls ready but not yet reported: held while the stream still has parts at hand, then reported
   * together (before any other event, so the step sees the stream's order). A call is never held
   * while the stream waits: dispatch still starts while the model streams.
   */
  let ready: ReadyToolCall[] = [];
  const reportCalls = () => {
    if (ready.length === 0) return;
    const calls = ready;
    ready = [];
    // (XState drops what a stopped actor sends back: nothing reaches a step that stopped listening)
    sendBack({ type: 'MODEL.TOOL_CALL', calls });
  };
  const send = (e: ModelStreamEvent) => {
    reportCalls();
    sendBack(e);
  };
  (async () => {
    let finished = false;
    try {
      const { stream } = await input.model.doStream({
        ...input.callOptions,
        prompt: input.prompt,
        tools: input.tools.length ? [...input.tools] : undefined,
        abortSignal: controller.signal,
      });
      const reader = stream.getReader();
      // Calls are dispatched as soon as their input is complete, not when the provider gets round
      // to its `tool-call` part (OpenAI Chat sends those only when the stream closes).
      const calls = new ToolInputTracker((call) => void ready.push(call));
      // Provider metadata of open reasoning blocks, by block id (Anthropic sends the signature in a delta).
      const reasoningMeta = new Map<string, SharedV3ProviderMetadata | undefined>();
      try {
        for (;;) {
          const read = reader.read();
          // Stryker disable next-line ConditionalExpression,EqualityOperator: counted as held with none held, the read is watched for nothing (an empty list is never reported): this only spares those microtask turns
          const held = ready.length > 0;
          if (ready.length >= MAX_HELD_CALLS || (held && !(await settlesAtHand(read)))) reportCalls();
          const { done, value: part } = await read;
          if (done || controller.signal.aborted) break;
          switch (part.type) {
            case 'text-delta':
              if (part.delta) send({ type: 'MODEL.TEXT', kind: 'text', delta: part.delta });
              break;
            // Stryker disable next-line ConditionalExpression: falling through to reasoning-delta stores the same metadata (a start has no delta)
            case 'reasoning-start':
              reasoningMeta.set(part.id, part.providerMetadata);
              break;
            case 'reasoning-delta':
              reasoningMeta.set(part.id, mergeMetadata(reasoningMeta.get(part.id), part.providerMetadata));
              if (part.delta) send({ type: 'MODEL.TEXT', kind: 'reasoning', delta: part.delta });
              break;
            // (Open question, not settled by SPEC: a block that closes without metadata is not reported
            // as closed, so its text stays in the step's buffer and joins the next block's; when that
            // one is signed, both texts are logged, and replayed, under its signature.)
            case 'reasoning-end': {
              const meta = mergeMetadata(reasoningMeta.get(part.id), part.providerMetadata);
              reasoningMeta.delete(part.id);
              // Stryker disable next-line StringLiteral: a closing event's kind is never read (logReasoningEnd logs the block as reasoning)
              if (meta) send({ type: 'MODEL.TEXT', kind: 'reasoning', delta: '', providerMetadata: meta });
              break;
            }
            case 'stream-start':
              input.onWarnings?.(part.warnings);
              break;
            case 'tool-input-start':
              calls.start(part.id, part.toolName);
              break;
            case 'tool-input-delta':
              calls.delta(part.id, part.delta);
              break;
            case 'tool-input-end':
              calls.end(part.id);
              break;
            case 'tool-call':
              calls.call(part.toolCallId, part.toolName, part.input);
              break;
            case 'finish':
              finished = completed = true;
              calls.flush();
              send({ type: 'MODEL.FINISH', finishReason: finishReasonOf(part), ...(part.usage ? { usage: part.usage } : {}) });
              break;
            case 'error':
              finished = true;
              send({ type: 'MODEL.ERROR', error: part.error });
              break;
            // any other part (response metadata, sources, raw chunks) is ignored
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
    // (a call whose input was complete has been reported; half-streamed inputs are dropped)
    // Aborting costs an event dispatch (tens of µs on Node 20), once per step: skipped when the
    // response has already finished (providers send the finish part once the body is consumed).
    if (!completed) controller.abort(STOPPED);
  };
});

function mergeMetadata(a: SharedV3ProviderMetadata | undefined, b: SharedV3ProviderMetadata | undefined): SharedV3ProviderMetadata | undefined {
  if (!b) return a;
  const out: SharedV3ProviderMetadata = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = { ...out[k], ...v };
  return out;
}
