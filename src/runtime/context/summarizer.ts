/**
 * Who writes the summary of turns that leave the prompt. The default is the deterministic digest
 * (turnDigest.ts); `modelSummarizer` asks a model. A summariser is untrusted like any model
 * output: its text is clipped to the budget, and a failure or an empty answer falls back to the
 * digest (the fold still happens, and the log says which strategy wrote it).
 */
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { describeThrown } from '../../protocol/index.js';
import type { Clock } from '../clock.js';
import { digestLine, digestSummary, type FoldedTurn } from './turnDigest.js';

/** What a summarizer is given when turns leave the prompt. */
export interface SummaryRequest {
  /** The summary the prompt carries now (undefined before the first fold). */
  readonly previous: string | undefined;
  /** The turns leaving the prompt, oldest first. */
  readonly turns: readonly FoldedTurn[];
  /** The summary must fit in this many characters (longer text is clipped). */
  readonly maxChars: number;
  readonly signal?: AbortSignal;
}

/** Writes the new cumulative summary (covering `previous` and `turns`). */
export type TurnSummarizer = (request: SummaryRequest) => Promise<string> | string;

/** The summariser used when none is given: no model call, same input gives the same text. */
export const digestSummarizer: TurnSummarizer = ({ previous, turns, maxChars }) => digestSummary(previous, turns, maxChars);

/** A summary and which strategy wrote it (`model` or `digest`), with why the model was not used. */
export interface WrittenSummary {
  readonly text: string;
  readonly by: 'model' | 'digest';
  readonly fallbackReason?: string;
}

/** How long a summariser may take before the digest is used instead (default 60 s). */
export const DEFAULT_SUMMARY_TIMEOUT_MS = 60_000;

/**
 * Runs `summarizer`, falling back to the digest when it throws, answers nothing, is not text, or
 * has not answered within `timeoutMs` on `clock` (its signal is then aborted): a hung model never
 * keeps the next turn from starting.
 */
export async function writeSummary(
  summarizer: TurnSummarizer | undefined,
  request: SummaryRequest,
  deadline?: { clock: Clock; timeoutMs: number },
): Promise<WrittenSummary> {
  const digest = (): string => digestSummary(request.previous, request.turns, request.maxChars);
  if (!summarizer || summarizer === digestSummarizer) return { text: digest(), by: 'digest' };
  const abort = new AbortController();
  const onOuterAbort = () => abort.abort(request.signal?.reason);
  request.signal?.addEventListener('abort', onOuterAbort, { once: true });
  if (request.signal?.aborted) abort.abort(request.signal.reason);
  let timer: unknown;
  const TIMED_OUT = Symbol('timed out');
  const timedOut = new Promise<typeof TIMED_OUT>((resolve) => {
    if (deadline) timer = deadline.clock.setTimeout(() => resolve(TIMED_OUT), deadline.timeoutMs);
  });
  try {
    const text: unknown = await Promise.race([Promise.resolve().then(() => summarizer({ ...request, signal: abort.signal })), timedOut]);
    if (text === TIMED_OUT) {
      abort.abort(new Error('summary deadline'));
      return { text: digest(), by: 'digest', fallbackReason: `the summariser did not answer within ${deadline!.timeoutMs} ms` };
    }
    if (typeof text !== 'string' || !text.trim()) return { text: digest(), by: 'digest', fallbackReason: 'the summariser returned no text' };
    return { text: text.length > request.maxChars ? text.slice(0, request.maxChars) : text, by: 'model' };
  } catch (e) {
    return { text: digest(), by: 'digest', fallbackReason: `the summariser failed: ${describeThrown(e)}` };
  } finally {
    if (deadline && timer !== undefined) deadline.clock.clearTimeout(timer);
    request.signal?.removeEventListener('abort', onOuterAbort);
  }
}

const INSTRUCTIONS =
  'You compress an agent session. Write a concise summary of the conversation so far that keeps ' +
  'every fact, decision, file name and open task the assistant still needs. Plain text, no preamble.';

/** A summariser that asks `model` (any AI SDK `LanguageModelV3`) in one non-streaming request. */
export function modelSummarizer(model: LanguageModelV3, options: { maxOutputTokens?: number } = {}): TurnSummarizer {
  return async ({ previous, turns, maxChars, signal }) => {
    const material = [
      ...(previous ? [`Summary so far:\n${previous}`] : []),
      `Turns to fold in:\n${turns.map(digestLine).join('\n')}`,
      `Answer in at most ${maxChars} characters.`,
    ].join('\n\n');
    const result = await model.doGenerate({
      prompt: [
        { role: 'system', content: INSTRUCTIONS },
        { role: 'user', content: [{ type: 'text', text: material }] },
      ],
      maxOutputTokens: options.maxOutputTokens ?? Math.max(64, Math.ceil(maxChars / 3)),
      ...(signal ? { abortSignal: signal } : {}),
    });
    return result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  };
}
