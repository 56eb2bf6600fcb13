/**
 * Context compaction: the persistent reduction a context-overflow retry needs (SPEC §5). A
 * compactor only *chooses* which tool results the model should see as stubs; the choice is
 * recorded as a `context/compacted` event, and the projection applies it. Nothing is deleted: the
 * full results stay in the log (and in the spill store).
 */
import { errorNameFor, type LogEvent, type LogEventOf, type ToolResult } from '../../protocol/index.js';
import type { ArgLimits } from '../args.js';
import type { SessionLog } from '../log/sessionLog.js';
import { compactedStub } from '../projection/compactedText.js';

/** What a compactor is told about the request that overflowed. */
export interface CompactionOptions {
  /** The turn whose next request overflowed. */
  turnId: string;
}

/** Which results to stub, and a name for the strategy (recorded in the event). */
export interface CompactionResult {
  /** `seq`s of `tool/result` events to show as stubs from now on. */
  stubbedSeqs: number[];
  strategy: string;
}

/**
 * A pluggable compaction strategy: a pure choice over the session's events (`compactionEvents`);
 * `undefined` when it has nothing to offer.
 */
export interface Compactor {
  /** The results to stub, or undefined when nothing can be made smaller. */
  compact(events: readonly LogEvent[], options: CompactionOptions): CompactionResult | undefined;
}

/** Options of the default compactor. */
export interface StubOlderToolResultsOptions {
  /** Steps (with tool results) whose results stay intact, counted from the most recent. Default 1. */
  keepRecentSteps?: number;
}

/**
 * The default compactor: stubs the tool results of every step except the most recent ones, which
 * the model is most likely still working from. A result is only stubbed when its stub is shorter.
 */
export function stubOlderToolResults(options: StubOlderToolResultsOptions = {}): Compactor {
  const keep = Math.max(0, Math.floor(options.keepRecentSteps ?? 1));
  const strategy = 'stub-older-tool-results';
  return {
    compact(events, { turnId }) {
      const stubbed = new Set<number>();
      const locators = new Map<string, string>();
      // Results grouped by step, steps in log order.
      const steps = new Map<string, LogEventOf<'tool/result'>[]>();
      let seenTarget = false;
      for (const event of events) {
        // Later turns are not part of this turn's prompt, so stubbing them would not help.
        if (event.type === 'turn/start') {
          if (seenTarget && event.turnId !== turnId) break;
          if (event.turnId === turnId) seenTarget = true;
        }
        if (event.type === 'context/compacted') for (const seq of event.stubbedSeqs) stubbed.add(seq);
        if (event.type === 'tool/spilled' && event.turnId !== undefined) locators.set(`${event.turnId}\u0000${event.callId}`, event.locator);
        if (event.type === 'tool/result' && event.turnId !== undefined) {
          const key = `${event.turnId}\u0000${event.stepIndex ?? -1}`;
          const group = steps.get(key) ?? [];
          group.push(event);
          steps.set(key, group);
        }
      }
      const groups = [...steps.values()];
      const older = groups.slice(0, Math.max(0, groups.length - keep)).flat();
      const stubbedSeqs = older
        .filter((r) => !stubbed.has(r.seq))
        .filter((r) => {
          const locator = locators.get(`${r.turnId}\u0000${r.callId}`);
          const stub = compactedStub({ chars: r.result.content.length, seq: r.seq, ...(locator !== undefined ? { locator } : {}) });
          return stub.length < r.result.content.length;
        })
        .map((r) => r.seq);
      return stubbedSeqs.length ? { stubbedSeqs, strategy } : undefined;
    },
  };
}

/** The compactor used when none is configured. */
export const defaultCompactor: Compactor = stubOlderToolResults();

/**
 * The events a compactor chooses from: the log's; for a log resumed from a checkpoint (it holds
 * only the events after it, `log.firstSeq`), preceded by the `tool/result`s from before the
 * checkpoint that the prompt still shows unstubbed, as the session's index keeps them (their
 * `seq`, place, call, `isError`, `content` and `parts`; `time` 0, `value` absent, `metadata` {}).
 * Other events from before the checkpoint are not there: stubbed results, which no compactor can
 * stub again, and events that are not results.
 */
export function compactionEvents(log: SessionLog): readonly LogEvent[] {
  const events = log.events();
  const first = log.firstSeq ?? 1;
  if (first <= 1) return events;
  const before: LogEvent[] = [];
  for (const turn of log.index.prompt.toJSON().turns) {
    for (const step of turn.steps) {
      for (const [callSeq, r] of step.results) {
        if (r.seq >= first || r.content === undefined) continue;
        const shared = { callId: r.callId, toolName: r.toolName, content: r.content, ...(r.parts ? { parts: [...r.parts] } : {}), metadata: {} };
        // A checkpoint written before results kept their code has none to give: TOOL_FAILED then.
        const code = r.code ?? 'TOOL_FAILED';
        const result: ToolResult = r.isError ? { ...shared, isError: true, error: { name: errorNameFor(code), code, message: r.content } } : { ...shared, isError: false };
        before.push({ seq: r.seq, time: 0, type: 'tool/result', turnId: turn.turnId, stepIndex: step.index, callId: r.callId, toolName: r.toolName, sourceEventSeqs: [callSeq], result });
      }
    }
  }
  if (before.length === 0) return events;
  before.sort((a, b) => a.seq - b.seq);
  return [...before, ...events];
}

/** What `compactAndMeasure` did. */
export interface CompactionMeasurement {
  /** A `context/compacted` event was appended. */
  compacted: boolean;
  /** The projected prompt is now smaller than before: the only case that justifies a retry. */
  shrank: boolean;
  beforeChars: number;
  afterChars: number;
  event?: LogEventOf<'context/compacted'>;
}

/**
 * Runs `compactor` over the log, measures the projected prompt before and after, and appends the
 * `context/compacted` event (only when something new was stubbed).
 */
export function compactAndMeasure(
  log: SessionLog,
  compactor: Compactor,
  options: CompactionOptions & { system?: string; argLimits?: ArgLimits },
): CompactionMeasurement {
  // Measured on exactly the prompt the model is sent (same system text, same argument limits),
  // from the projection the log's index keeps: nothing is projected again from the whole log.
  const projection = log.index.prompt;
  const view = {
    turnId: options.turnId,
    ...(options.system !== undefined ? { system: options.system } : {}),
    ...(options.argLimits !== undefined ? { argLimits: options.argLimits } : {}),
  };
  const beforeChars = projection.size(view);
  const unchanged: CompactionMeasurement = { compacted: false, shrank: false, beforeChars, afterChars: beforeChars };
  const choice = compactor.compact(compactionEvents(log), { turnId: options.turnId });
  if (!choice) return unchanged;

  // Only seqs that name a tool result not already stubbed count: a compactor that offers the same
  // stubs again must not look like progress.
  const isResult = (seq: number) => projection.hasResult(seq) || log.get(seq)?.type === 'tool/result';
  const stubbedSeqs = [...new Set(choice.stubbedSeqs)].filter((seq) => isResult(seq) && !projection.isStubbed(seq)).sort((a, b) => a - b);
  if (!stubbedSeqs.length) return unchanged;

  const afterChars = projection.sizeIfStubbed(stubbedSeqs, view);
  const event = log.append({ type: 'context/compacted', turnId: options.turnId, strategy: choice.strategy, stubbedSeqs, beforeChars, afterChars });
  return { compacted: true, shrank: afterChars < beforeChars, beforeChars, afterChars, event };
}
