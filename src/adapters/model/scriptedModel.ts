/**
 * A deterministic `LanguageModelV3` that replays a script: one scripted response per model request.
 * Used by tests, examples and the CLI as the embedded default model. Browser-safe.
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import type { Clock } from '../../runtime/clock.js';
import { sleep, systemClock } from '../../runtime/clock.js';

/** One tool call the scripted model emits. */
export interface ScriptedToolCall {
  toolName: string;
  /**
   * The arguments. A string is sent verbatim as the raw JSON text (so a script can send cut-off or
   * invalid JSON); any other value is JSON-encoded. Defaults to `{}`.
   */
  input?: unknown;
  /** Defaults to `call-<request>-<index>` (request counted from 1, index from 0). */
  toolCallId?: string;
  /** Also emit `tool-input-start/delta/end` before the `tool-call` part (overrides the model option). */
  streamInput?: boolean;
}

/** How a scripted request fails after some of its parts were streamed. */
export interface ScriptedStreamError {
  error: unknown;
  /**
   * Number of parts delivered before the failure, counting `stream-start`. Defaults to every part
   * except `finish`, i.e. the stream breaks where the finish would have been.
   */
  afterParts?: number;
  /**
   * `throw` (default): the stream itself errors, so the reader's `read()` rejects (a dropped
   * connection). `part`: an `{ type: 'error' }` part followed by a finish with reason `error`
   * (how providers report an error the server sent inside the stream).
   */
  as?: 'throw' | 'part';
}

/** One model request's scripted response. */
export interface ScriptedResponse {
  /** Text output: a string is one delta, an array is one delta per element. */
  text?: string | readonly string[];
  /** Reasoning output, streamed before the text: a string is one delta, an array one per element. */
  reasoning?: string | readonly string[];
  toolCalls?: readonly ScriptedToolCall[];
  /** Defaults to `tool-calls` when there are tool calls, else `stop`. */
  finishReason?: LanguageModelV3FinishReason['unified'] | LanguageModelV3FinishReason;
  /** Token counts; by default a rough estimate (characters / 4) of the prompt and the output. */
  usage?: { inputTokens?: number; outputTokens?: number } | LanguageModelV3Usage;
  /** The request fails before any part is streamed (e.g. an `APICallError` with status 429). */
  error?: unknown;
  /** The request fails while streaming. */
  streamError?: ScriptedStreamError;
  /**
   * Exact stream parts to send instead of the ones built from the fields above (no `stream-start`
   * or `finish` added). The escape hatch for part orders the fields cannot express.
   */
  parts?: readonly LanguageModelV3StreamPart[];
  /** Delay (ms on the model's clock) before each part of this response; overrides the model option. */
  chunkDelayMs?: ChunkDelay;
}

/** What a step function receives: the request the model was sent. */
export interface ScriptedRequest {
  /** 0-based number of this request. */
  index: number;
  prompt: LanguageModelV3Prompt;
  options: LanguageModelV3CallOptions;
}

/** A scripted response, or a function of the request that returns one (it may also throw). */
export type ScriptedStep = ScriptedResponse | ((request: ScriptedRequest) => ScriptedResponse | Promise<ScriptedResponse>);

/** Delay before each part: a constant, or a function of the part and its position in the stream. */
export type ChunkDelay = number | ((part: LanguageModelV3StreamPart, index: number) => number);

/** Options of `scriptedModel`. */
export interface ScriptedModelOptions {
  /** Clock for chunk delays. Defaults to the system clock; tests inject a `ManualClock`. */
  clock?: Clock;
  /** Delay before each part; 0 (the default) sets no timer at all. */
  chunkDelayMs?: ChunkDelay;
  /** Emit `tool-input-start/delta/end` before every `tool-call` part. Default false. */
  streamToolInput?: boolean;
  modelId?: string;
}

/** A request the scripted model received. */
export interface ScriptedCall {
  method: 'stream' | 'generate';
  prompt: LanguageModelV3Prompt;
  options: LanguageModelV3CallOptions;
}

/** The scripted model: a `LanguageModelV3` that also exposes what it was sent. */
export interface ScriptedModel extends LanguageModelV3 {
  /** Every request received, in order (including requests that failed). */
  readonly calls: readonly ScriptedCall[];
  /** Number of scripted steps not yet consumed. */
  readonly remaining: number;
  /** A new model with the same script, from its first step (what `explore` gives each process). */
  restart(): ScriptedModel;
}

/**
 * Creates a `LanguageModelV3` that answers request *n* with `steps[n]`: a model for tests and demos.
 *
 * @example
 * ```ts
 * const model = scriptedModel([{ toolCalls: [{ toolName: 'read', input: { path: 'a.txt' } }] }, { text: 'Done.' }]);
 * const { outcome } = await rt.startTurn({ model, input: 'read a.txt' }).done;
 * ```
 */
export function scriptedModel(steps: readonly ScriptedStep[], options: ScriptedModelOptions = {}): ScriptedModel {
  const clock = options.clock ?? systemClock;
  const calls: ScriptedCall[] = [];

  // Shared by both methods: record the request, pick the step, resolve it to parts.
  async function next(method: ScriptedCall['method'], callOptions: LanguageModelV3CallOptions) {
    throwIfAborted(callOptions.abortSignal);
    const index = calls.length;
    calls.push({ method, prompt: callOptions.prompt, options: callOptions });
    const step = steps[index];
    if (step === undefined) {
      throw new Error(`scriptedModel: request #${index + 1} received, but only ${steps.length} response(s) were scripted`);
    }
    const response = typeof step === 'function' ? await step({ index, prompt: callOptions.prompt, options: callOptions }) : step;
    throwIfAborted(callOptions.abortSignal);
    if (response.error !== undefined) throw response.error;
    const parts = response.parts ? [...response.parts] : buildParts(response, index, callOptions.prompt, options.streamToolInput ?? false);
    const delay = response.chunkDelayMs ?? options.chunkDelayMs ?? 0;
    return { parts, delay, streamError: response.streamError };
  }

  const model: ScriptedModel = {
    specificationVersion: 'v3',
    provider: 'dsh',
    modelId: options.modelId ?? 'scripted',
    supportedUrls: {},
    get calls() {
      return calls;
    },
    get remaining() {
      return Math.max(0, steps.length - calls.length);
    },
    restart: () => scriptedModel(steps, options),

    async doStream(callOptions): Promise<LanguageModelV3StreamResult> {
      const { parts, delay, streamError } = await next('stream', callOptions);
      return { stream: partStream(parts, delay, streamError, clock, callOptions.abortSignal) };
    },

    async doGenerate(callOptions): Promise<LanguageModelV3GenerateResult> {
      const { parts, delay, streamError } = await next('generate', callOptions);
      // A non-streamed response arrives all at once: wait the sum of the per-part delays.
      const total = parts.reduce((sum, part, i) => sum + delayFor(delay, part, i), 0);
      if (total > 0) await sleep(clock, total, callOptions.abortSignal);
      if (streamError) throw streamError.error;
      return generateResultOf(parts);
    },
  };
  return model;
}

/** Made once: `abort()` without a reason builds a DOMException (and captures a stack) each time. */
const READER_CANCELLED = new DOMException('the reader cancelled the stream', 'AbortError');

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function delayFor(delay: ChunkDelay, part: LanguageModelV3StreamPart, index: number): number {
  const ms = typeof delay === 'function' ? delay(part, index) : delay;
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

function deltas(value: string | readonly string[] | undefined): readonly string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

/** The parts of one response, in the order a provider sends them. */
function buildParts(response: ScriptedResponse, index: number, prompt: LanguageModelV3Prompt, streamToolInput: boolean): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  let outputChars = 0;
  const reasoning = deltas(response.reasoning);
  if (reasoning.length) {
    const id = `reasoning-${index + 1}`;
    parts.push({ type: 'reasoning-start', id });
    for (const delta of reasoning) {
      parts.push({ type: 'reasoning-delta', id, delta });
      outputChars += delta.length;
    }
    parts.push({ type: 'reasoning-end', id });
  }
  const text = deltas(response.text);
  if (text.length) {
    const id = `text-${index + 1}`;
    parts.push({ type: 'text-start', id });
    for (const delta of text) {
      parts.push({ type: 'text-delta', id, delta });
      outputChars += delta.length;
    }
    parts.push({ type: 'text-end', id });
  }
  const toolCalls = response.toolCalls ?? [];
  toolCalls.forEach((call, i) => {
    const toolCallId = call.toolCallId ?? `call-${index + 1}-${i}`;
    const input = typeof call.input === 'string' ? call.input : JSON.stringify(call.input ?? {});
    if (call.streamInput ?? streamToolInput) {
      parts.push({ type: 'tool-input-start', id: toolCallId, toolName: call.toolName });
      parts.push({ type: 'tool-input-delta', id: toolCallId, delta: input });
      parts.push({ type: 'tool-input-end', id: toolCallId });
    }
    parts.push({ type: 'tool-call', toolCallId, toolName: call.toolName, input });
    outputChars += call.toolName.length + input.length;
  });
  const unified = response.finishReason ?? (toolCalls.length ? 'tool-calls' : 'stop');
  const finishReason = typeof unified === 'string' ? { unified, raw: unified } : unified;
  parts.push({ type: 'finish', finishReason, usage: usageOf(response.usage, prompt, outputChars) });
  return parts;
}

function usageOf(usage: ScriptedResponse['usage'], prompt: LanguageModelV3Prompt, outputChars: number): LanguageModelV3Usage {
  if (usage && typeof usage.inputTokens === 'object') return usage as LanguageModelV3Usage;
  const short = usage as { inputTokens?: number; outputTokens?: number } | undefined;
  const input = short?.inputTokens ?? Math.ceil(JSON.stringify(prompt).length / 4);
  const output = short?.outputTokens ?? Math.ceil(outputChars / 4);
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
}

/**
 * A pull-driven stream (high-water mark 0): part *i* is produced only when the reader asks for it,
 * after its delay. Pulling lazily matters for errors: `controller.error()` discards queued parts,
 * so a mid-stream failure must not be raised before the reader has taken the parts before it.
 */
function partStream(
  parts: readonly LanguageModelV3StreamPart[],
  delay: ChunkDelay,
  streamError: ScriptedStreamError | undefined,
  clock: Clock,
  signal: AbortSignal | undefined,
): ReadableStream<LanguageModelV3StreamPart> {
  let plan: LanguageModelV3StreamPart[] = [...parts];
  let failAt = Infinity;
  if (streamError) {
    const finishAt = plan.findIndex((p) => p.type === 'finish');
    const cut = Math.max(0, Math.min(streamError.afterParts ?? (finishAt < 0 ? plan.length : finishAt), plan.length));
    plan = plan.slice(0, cut);
    if ((streamError.as ?? 'throw') === 'part') {
      const usage = [...parts].reverse().find((p): p is Extract<LanguageModelV3StreamPart, { type: 'finish' }> => p.type === 'finish')?.usage;
      plan.push({ type: 'error', error: streamError.error });
      plan.push({ type: 'finish', finishReason: { unified: 'error', raw: 'error' }, usage: usage ?? usageOf(undefined, [], 0) });
    } else {
      failAt = plan.length;
    }
  }

  // Cancels a pending chunk delay when the reader cancels; the caller's signal aborts it too.
  const local = new AbortController();
  let position = 0;
  let onAbort: (() => void) | undefined;
  const detach = () => {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  };

  return new ReadableStream<LanguageModelV3StreamPart>(
    {
      start(controller) {
        if (!signal) return;
        onAbort = () => {
          local.abort(signal.reason);
          try {
            controller.error(abortReason(signal));
          } catch {
            // Already closed or errored: nothing left to abort.
          }
        };
        // Aborted between the request and the first read: the listener would never fire.
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      },
      async pull(controller) {
        const index = position;
        if (index >= failAt) {
          detach();
          controller.error(streamError!.error);
          return;
        }
        const part = plan[index];
        if (part === undefined) {
          detach();
          controller.close();
          return;
        }
        const ms = delayFor(delay, part, index);
        if (ms > 0) {
          try {
            await sleep(clock, ms, local.signal);
          } catch {
            return; // aborted or cancelled: the abort handler has already settled the stream
          }
        }
        position = index + 1;
        controller.enqueue(part);
        // The last part is out: close now, so a reader that stops at the finish part does not
        // leave the stream (and the listener on the caller's signal) open.
        if (position === plan.length && failAt === Infinity) {
          detach();
          controller.close();
        }
      },
      cancel(reason) {
        local.abort(reason ?? READER_CANCELLED);
        detach();
      },
    },
    { highWaterMark: 0 },
  );
}

/** Folds stream parts into the content of a non-streamed result. */
function generateResultOf(parts: readonly LanguageModelV3StreamPart[]): LanguageModelV3GenerateResult {
  const content: LanguageModelV3Content[] = [];
  let finish: Extract<LanguageModelV3StreamPart, { type: 'finish' }> | undefined;
  const open = new Map<string, { type: 'text' | 'reasoning'; text: string }>();
  for (const part of parts) {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start': {
        const entry = { type: part.type === 'text-start' ? ('text' as const) : ('reasoning' as const), text: '' };
        open.set(part.id, entry);
        content.push(entry);
        break;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const entry = open.get(part.id);
        if (entry) entry.text += part.delta;
        else content.push({ type: part.type === 'text-delta' ? 'text' : 'reasoning', text: part.delta });
        break;
      }
      case 'tool-call':
        content.push(part);
        break;
      case 'error':
        throw part.error;
      case 'finish':
        finish = part;
        break;
      default:
        break;
    }
  }
  return {
    content,
    finishReason: finish?.finishReason ?? { unified: 'other', raw: undefined },
    usage: finish?.usage ?? usageOf(undefined, [], 0),
    warnings: [],
    ...(finish?.providerMetadata ? { providerMetadata: finish.providerMetadata } : {}),
  };
}
