/**
 * Keeping the prompt inside the context window the runtime is given, forever. Two moments:
 *
 * - **Before a turn** (`fitBeforeTurn`, may await a model): when the finished turns fill more than
 *   `foldAt` of the window, older tool results are stubbed, then the oldest whole turns are
 *   folded into a summary (the configured summariser, else the deterministic digest) until the
 *   prompt is back under `foldTo`.
 * - **Before each model request** (`fitBeforeRequest`, synchronous): a prompt that would exceed the
 *   window is reduced the same way at once, with the digest, so no request is sent too big.
 *
 * Every reduction is a `context/compacted` event: persistent, logged, replayed on resume (SPEC §5).
 * Sizes are `promptSize` characters (roughly four per token).
 */
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { ArgLimits } from '../args.js';
import type { SessionLog } from '../log/sessionLog.js';
import { compactAndMeasure, stubOlderToolResults } from './compaction.js';
import { appendFold, planFold, readFoldedTurnsOf } from './foldTurns.js';
import { DEFAULT_SUMMARY_TIMEOUT_MS, writeSummary, type TurnSummarizer } from './summarizer.js';
import type { Clock } from '../clock.js';
import { digestSummary } from './turnDigest.js';

/** How big a prompt may grow, and when turns are folded into a summary to stay under it. */
export interface ContextWindow {
  /** The most prompt characters (`promptSize`: text, arguments, results; ≈ 4 per token) a request may carry. */
  maxChars: number;
  /** Before a turn, reduce when the prompt exceeds this share of the window (default 0.75). */
  foldAt?: number;
  /** ...down to this share (default 0.5). */
  foldTo?: number;
  /** Longest summary (default: 15 % of the window, at most 12,000 chars). */
  summaryMaxChars?: number;
  /** Writes the summary of folded turns (default: the deterministic digest; see `modelSummarizer`). */
  summarizer?: TurnSummarizer;
  /** A summariser that has not answered by then is abandoned for the digest (default 60 s). */
  summaryTimeoutMs?: number;
}

interface FitOptions {
  /** The turn the room is made for (the `context/compacted` events carry it). */
  turnId: string;
  system?: string;
  argLimits?: ArgLimits;
}

/** The window with its defaults filled in; throws a RangeError on a window that cannot work. */
export function resolveContextWindow(window: ContextWindow): Required<Omit<ContextWindow, 'summarizer' | 'summaryTimeoutMs'>> & Pick<ContextWindow, 'summarizer'> {
  if (!Number.isFinite(window.maxChars) || window.maxChars < 1_000) throw new RangeError(`contextWindow.maxChars must be a number ≥ 1000, got ${String(window.maxChars)}`);
  const foldAt = window.foldAt ?? 0.75;
  const foldTo = window.foldTo ?? 0.5;
  if (!(foldTo > 0 && foldTo <= foldAt && foldAt <= 1)) throw new RangeError('contextWindow: need 0 < foldTo ≤ foldAt ≤ 1');
  const summaryMaxChars = window.summaryMaxChars ?? Math.min(12_000, Math.floor(window.maxChars * 0.15));
  if (!(summaryMaxChars > 0 && summaryMaxChars < window.maxChars * foldTo)) throw new RangeError('contextWindow.summaryMaxChars must be positive and below maxChars × foldTo');
  return { maxChars: window.maxChars, foldAt, foldTo, summaryMaxChars, summarizer: window.summarizer };
}

/** The prompt's size now, from the projection the log's index keeps (no events are read). */
function sizeNow(log: SessionLog, options: FitOptions): number {
  return log.index.prompt.size({ ...(options.system !== undefined ? { system: options.system } : {}), ...(options.argLimits !== undefined ? { argLimits: options.argLimits } : {}) });
}

const stubber = stubOlderToolResults({ keepRecentSteps: 1 });

/** Stubs older results when that helps; true when the prompt now fits under `limit`. */
function stubUnder(log: SessionLog, limit: number, options: FitOptions): boolean {
  const measured = compactAndMeasure(log, stubber, options);
  return (measured.compacted ? measured.afterChars : measured.beforeChars) <= limit;
}

/** Before a turn: reduce the finished turns' prompt to `foldTo` once it passes `foldAt`. */
export async function fitBeforeTurn(log: SessionLog, window: ContextWindow, options: FitOptions & { signal?: AbortSignal; clock: Clock }): Promise<void> {
  const w = resolveContextWindow(window);
  if (sizeNow(log, options) <= w.maxChars * w.foldAt) return;
  const target = Math.floor(w.maxChars * w.foldTo);
  if (stubUnder(log, target, options)) return;
  const plan = planFold(log, { keepTurnId: options.turnId, targetChars: target, summaryMaxChars: w.summaryMaxChars, system: options.system, argLimits: options.argLimits });
  if (!plan) return;
  const written = await writeSummary(w.summarizer, {
    previous: plan.previous,
    turns: readFoldedTurnsOf(log, plan.turnIds),
    maxChars: w.summaryMaxChars,
    ...(options.signal ? { signal: options.signal } : {}),
  }, { clock: options.clock, timeoutMs: window.summaryTimeoutMs ?? DEFAULT_SUMMARY_TIMEOUT_MS });
  // The log may have moved while the summariser ran (it cannot: turns run one at a time, and this
  // runs before the next one starts); the fold is appended for exactly the turns planned.
  if (written.fallbackReason) log.append({ type: 'warning', turnId: options.turnId, code: 'SUMMARY_FALLBACK', message: `folded turns were digested instead: ${written.fallbackReason}` });
  appendFold(log, { turnId: options.turnId, plan, summary: written.text, strategy: `fold-old-turns:${written.by}`, system: options.system, argLimits: options.argLimits });
}

/**
 * Before a model request: the prompt for `turnId`, reduced first (stubs, then a digest fold) when
 * it would exceed the window.
 */
export function fitBeforeRequest(log: SessionLog, window: ContextWindow, options: FitOptions): LanguageModelV3Prompt {
  const w = resolveContextWindow(window);
  const projection = { turnId: options.turnId, ...(options.system !== undefined ? { system: options.system } : {}), ...(options.argLimits !== undefined ? { argLimits: options.argLimits } : {}) };
  const index = log.index;
  if (index.prompt.size(projection) <= w.maxChars) return index.prompt.render(projection);
  const target = Math.floor(w.maxChars * w.foldTo);
  if (!stubUnder(log, target, options)) {
    const plan = planFold(log, { keepTurnId: options.turnId, targetChars: target, summaryMaxChars: w.summaryMaxChars, system: options.system, argLimits: options.argLimits });
    if (plan) {
      // Synchronous here (a request is being built): always the digest.
      const summary = digestSummary(plan.previous, readFoldedTurnsOf(log, plan.turnIds), w.summaryMaxChars);
      appendFold(log, { turnId: options.turnId, plan, summary, strategy: 'fold-old-turns:digest', system: options.system, argLimits: options.argLimits });
    }
  }
  return index.prompt.render(projection);
}

/**
 * The reduction after a context-overflow error when stubbing did not shrink the prompt (no window
 * is known, so the prompt is aimed at half its size): the oldest finished turns fold into a digest.
 * True when the prompt shrank.
 */
export function foldOnOverflow(log: SessionLog, options: FitOptions): boolean {
  const before = sizeNow(log, options);
  const plan = planFold(log, {
    keepTurnId: options.turnId,
    targetChars: Math.floor(before / 2),
    summaryMaxChars: Math.max(200, Math.min(12_000, Math.floor(before * 0.1))),
    system: options.system,
    argLimits: options.argLimits,
  });
  if (!plan) return false;
  const summary = digestSummary(plan.previous, readFoldedTurnsOf(log, plan.turnIds), Math.max(200, Math.min(12_000, Math.floor(before * 0.1))));
  const event = appendFold(log, { turnId: options.turnId, plan, summary, strategy: 'fold-old-turns:digest', system: options.system, argLimits: options.argLimits });
  return event.afterChars < event.beforeChars;
}
