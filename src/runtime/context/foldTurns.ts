/**
 * Folding whole old turns out of the prompt (SPEC §5: a persistent reduction, recorded in the log).
 * The turns stay in the log; a `context/compacted` event names them (`foldedTurnIds`) and carries
 * the cumulative `summary` the prompt shows in their place (projection/prompt.ts).
 *
 * Only finished turns fold, oldest first, and never the turn being made room for.
 */
import type { LogEventOf } from '../../protocol/index.js';
import type { ArgLimits } from '../args.js';
import type { SessionLog } from '../log/sessionLog.js';
import { foldedTurnOfState, readFoldedTurns, type FoldedTurn } from './turnDigest.js';

export interface FoldPlanOptions {
  /** The turn the room is made for: it never folds. */
  keepTurnId?: string;
  /** Fold until the projected prompt (with a summary of `summaryMaxChars`) is at most this big. */
  targetChars: number;
  summaryMaxChars: number;
  system?: string;
  argLimits?: ArgLimits;
}

export interface FoldPlan {
  /** Turns to fold, oldest first. */
  readonly turnIds: readonly string[];
  /** The summary the prompt carries now (before this fold). */
  readonly previous: string | undefined;
  readonly beforeChars: number;
}

/**
 * Chooses the oldest finished turns whose folding brings the prompt to `targetChars`; undefined
 * when the prompt already fits or nothing can fold. Each turn's share of the prompt comes from the
 * projection the log's index keeps, so planning reads no events.
 */
export function planFold(log: SessionLog, options: FoldPlanOptions): FoldPlan | undefined {
  const projection = log.index.prompt;
  const view = { ...(options.system !== undefined ? { system: options.system } : {}), ...(options.argLimits !== undefined ? { argLimits: options.argLimits } : {}) };
  const beforeChars = projection.size(view);
  if (beforeChars <= options.targetChars) return undefined;
  const previous = projection.foldedSummary;
  let remaining = beforeChars - (previous === undefined ? 0 : previous.length) + options.summaryMaxChars;
  const turnIds: string[] = [];
  for (const turn of projection.turnShares(view)) {
    if (remaining <= options.targetChars) break;
    if (turn.turnId === options.keepTurnId || !turn.ended) continue;
    remaining -= turn.chars;
    turnIds.push(turn.turnId);
  }
  return turnIds.length ? { turnIds, previous, beforeChars } : undefined;
}

/** Appends the fold, its `afterChars` the size the prompt has with it. */
export function appendFold(
  log: SessionLog,
  fold: { turnId: string; plan: FoldPlan; summary: string; strategy: string; system?: string; argLimits?: ArgLimits },
): LogEventOf<'context/compacted'> {
  const view = { ...(fold.system !== undefined ? { system: fold.system } : {}), ...(fold.argLimits !== undefined ? { argLimits: fold.argLimits } : {}) };
  const afterChars = log.index.prompt.sizeIfFolded(fold.plan.turnIds, fold.summary, view);
  return log.append({
    type: 'context/compacted',
    turnId: fold.turnId,
    strategy: fold.strategy,
    stubbedSeqs: [],
    foldedTurnIds: [...fold.plan.turnIds],
    summary: fold.summary,
    beforeChars: fold.plan.beforeChars,
    afterChars,
  });
}

/**
 * The digests of `turnIds` (ids in log order) over the whole session: from the log's events for a
 * turn the log holds from its `turn/start`; for one from before the checkpoint the log was resumed
 * from (`log.firstSeq`), from what the session's index keeps of it (its prompt projection and
 * outcome), as a full replay would read it.
 */
export function readFoldedTurnsOf(log: SessionLog, turnIds: readonly string[]): FoldedTurn[] {
  const events = log.events();
  if ((log.firstSeq ?? 1) <= 1) return readFoldedTurns(events, turnIds);
  const started = new Set<string>();
  for (const e of events) if (e.type === 'turn/start') started.add(e.turnId);
  const fromEvents = new Map(readFoldedTurns(events, turnIds.filter((id) => started.has(id))).map((t) => [t.turnId, t]));
  if (fromEvents.size === turnIds.length) return turnIds.map((id) => fromEvents.get(id)!);
  const index = log.index;
  const kept = new Map(index.prompt.toJSON().turns.map((t) => [t.turnId, t]));
  return turnIds.map((id) => fromEvents.get(id) ?? foldedTurnOfState(id, kept.get(id), index.turnOutcome(id)));
}
