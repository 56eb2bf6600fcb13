/**
 * Folding whole old turns out of the prompt (SPEC §5: a persistent reduction, recorded in the log).
 * The turns stay in the log; a `context/compacted` event names them (`foldedTurnIds`) and carries
 * the cumulative `summary` the prompt shows in their place (projection/prompt.ts).
 *
 * Only finished turns fold, oldest first, and never the turn being made room for.
 */
import type { LogEvent, LogEventOf } from '../../protocol/index.js';
import type { ArgLimits } from '../args.js';
import type { SessionLog } from '../log/sessionLog.js';
import { projectPrompt, promptSize } from '../projection/prompt.js';

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

/** The prompt's summary and the turns already folded, from the log. */
export function foldState(events: readonly LogEvent[]): { summary: string | undefined; folded: Set<string> } {
  let summary: string | undefined;
  const folded = new Set<string>();
  for (const e of events) {
    if (e.type !== 'context/compacted' || !e.foldedTurnIds) continue;
    for (const id of e.foldedTurnIds) folded.add(id);
    summary = e.summary;
  }
  return { summary, folded };
}

/**
 * Chooses the oldest finished turns whose folding brings the prompt to `targetChars`; undefined
 * when the prompt already fits or nothing can fold. Each turn's share of the prompt is measured by
 * projecting it alone (with the stubs already chosen), so one pass over the log suffices.
 */
export function planFold(events: readonly LogEvent[], options: FoldPlanOptions): FoldPlan | undefined {
  const projection = { ...(options.system !== undefined ? { system: options.system } : {}), ...(options.argLimits !== undefined ? { argLimits: options.argLimits } : {}) };
  const beforeChars = promptSize(projectPrompt(events, projection));
  if (beforeChars <= options.targetChars) return undefined;
  const { summary, folded } = foldState(events);
  const compactions = events.filter((e): e is LogEventOf<'context/compacted'> => e.type === 'context/compacted');
  const byTurn = new Map<string, LogEvent[]>();
  const finished = new Set<string>();
  for (const e of events) {
    if (!('turnId' in e) || e.turnId === undefined || folded.has(e.turnId) || e.type === 'context/compacted') continue;
    if (e.type === 'turn/end') finished.add(e.turnId);
    const list = byTurn.get(e.turnId);
    if (list) list.push(e);
    else byTurn.set(e.turnId, [e]);
  }
  const summaryNow = summary?.length ?? 0;
  let remaining = beforeChars - summaryNow + options.summaryMaxChars;
  const turnIds: string[] = [];
  for (const [turnId, turnEvents] of byTurn) {
    if (remaining <= options.targetChars) break;
    if (turnId === options.keepTurnId || !finished.has(turnId)) continue;
    remaining -= promptSize(projectPrompt([...turnEvents, ...compactions], { argLimits: options.argLimits }));
    turnIds.push(turnId);
  }
  return turnIds.length ? { turnIds, previous: summary, beforeChars } : undefined;
}

/** Appends the fold and returns it with the prompt's size after it. */
export function appendFold(
  log: SessionLog,
  fold: { turnId: string; plan: FoldPlan; summary: string; strategy: string; system?: string; argLimits?: ArgLimits },
): LogEventOf<'context/compacted'> {
  const pending: Omit<LogEventOf<'context/compacted'>, 'seq' | 'time'> = {
    type: 'context/compacted',
    turnId: fold.turnId,
    strategy: fold.strategy,
    stubbedSeqs: [],
    foldedTurnIds: [...fold.plan.turnIds],
    summary: fold.summary,
    beforeChars: fold.plan.beforeChars,
    afterChars: 0,
  };
  const preview: LogEvent = { ...pending, seq: log.lastSeq + 1, time: 0 };
  const projection = { ...(fold.system !== undefined ? { system: fold.system } : {}), ...(fold.argLimits !== undefined ? { argLimits: fold.argLimits } : {}) };
  const afterChars = promptSize(projectPrompt([...log.events(), preview], projection));
  return log.append({ ...pending, afterChars });
}
