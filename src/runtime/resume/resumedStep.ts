/**
 * The suspended step, run again in a new process from the log alone. The step machine is the
 * ordinary one; three injected pieces make it continue where the log stands instead of starting over:
 *
 * - a **replay model** (`replayModel`): instead of the model, the step's "response" is the calls the
 *   log holds without a result, in their order, then a finish (the model is not asked again);
 * - a **log view** (`resumedLog`): what the log already holds is not appended again and its `seq` is
 *   handed back (`turn/start`, `step/start`, each call's `tool/call`, the pending calls'
 *   `tool/approval-request`); the step's `step/end` counts all its calls and carries the model's
 *   own finish reason and usage from `turn/suspended`;
 * - a **pipeline view** (`resumedPipeline`): each call is validated again from its logged input and
 *   planned in the mode its `tool/call` logged; a pending call's pre-execute decision is the logged
 *   `ask` (its policies are not run again) so it goes straight to `awaitingApproval` and asks the
 *   runtime's approval service; a held call (settled before the suspension) is not run again: it
 *   finalizes with its logged result; no tool body of the step starts before every pending approval
 *   is answered (so a crash before the answer leaves the suspension pending, nothing having run).
 *
 * Calls before the pending ones already have their results and are not replayed. Browser-safe.
 */
import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import type { CallStages, PrepareOutcome, PreparedCall } from '../../../machines/callStages.js';
import type { LogPort } from '../../../machines/commitGate.js';
import { ErrorCode, errorNameFor, type LogEvent, type NewLogEvent, type ToolResult } from '../../protocol/index.js';
import { deepFreeze } from '../args.js';
import type { PendingSuspension, SuspendedStepCall } from './pendingSuspension.js';

/** The finish reason the replay model reports (the step's `step/end` gets the logged one). */
const REPLAY_FINISH = 'tool-calls';

/** A model whose one response is the suspended step's open calls (see the file comment). */
export function replayModel(pending: PendingSuspension): LanguageModelV3 {
  const parts: LanguageModelV3StreamPart[] = [
    { type: 'stream-start', warnings: [] },
    ...pending.open.map(
      (o): LanguageModelV3StreamPart => ({
        type: 'tool-call',
        toolCallId: o.call.callId,
        toolName: o.call.toolName,
        input: typeof o.call.input === 'string' ? o.call.input : JSON.stringify(o.call.input ?? {}),
      }),
    ),
    {
      type: 'finish',
      finishReason: { unified: REPLAY_FINISH, raw: undefined },
      usage: {
        inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: undefined, text: undefined, reasoning: undefined },
      },
    },
  ];
  return {
    specificationVersion: 'v3',
    provider: 'dsh',
    modelId: 'dsh:resumed-step',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('the resumed step replays its logged calls by streaming only')),
    doStream: async () => ({
      stream: new ReadableStream<LanguageModelV3StreamPart>({
        start(controller) {
          for (const p of parts) controller.enqueue(p);
          controller.close();
        },
      }),
    }),
  };
}

export interface ResumedStep {
  readonly model: LanguageModelV3;
  readonly log: LogPort;
  readonly pipeline: CallStages;
  /** True once the resumed step's `step/end` is in the log: later steps use the ordinary deps. */
  readonly ended: boolean;
  /**
   * A pending call was suspended again (its question parked once more): it no longer holds back
   * the step's other bodies, which run and settle so the turn can suspend again with them held.
   */
  parkedAgain(callId: string): void;
}

/** The model, log view and pipeline view of a resumed step (see the file comment). */
export function createResumedStep(pending: PendingSuspension, log: LogPort & { events(): readonly LogEvent[] }, pipeline: CallStages): ResumedStep {
  const { turnId, stepIndex } = pending;
  const byCallId = new Map<string, SuspendedStepCall>(pending.open.map((o) => [o.call.callId, o]));
  const awaiting = new Set(pending.open.filter((o) => o.awaiting).map((o) => o.call.callId));
  const logged = (pred: (e: LogEvent) => boolean) => log.events().find(pred);
  const inStep = (e: { turnId?: string; stepIndex?: number }) => e.turnId === turnId && e.stepIndex === stepIndex;
  let ended = false;
  // No body of the step starts before every pending approval is answered.
  let release!: () => void;
  const allAnswered = new Promise<void>((r) => (release = r));
  const unanswered = new Set(awaiting);
  const requestsSeen = new Set<string>();
  const settled = (callId: string) => {
    if (unanswered.delete(callId) && unanswered.size === 0) release();
  };

  const view: LogPort = {
    append(event: NewLogEvent) {
      if (!ended) {
        switch (event.type) {
          case 'turn/start':
            if (event.turnId === turnId && pending.turnStart) return pending.turnStart;
            break;
          case 'step/start':
            if (inStep(event)) return pending.stepStart ?? logged((e) => e.type === 'step/start' && inStep(e)) ?? log.append(event);
            break;
          case 'tool/call': {
            const o = inStep(event) ? byCallId.get(event.callId) : undefined;
            if (o) return o.call;
            break;
          }
          case 'tool/approval-request': {
            const o = inStep(event) && awaiting.has(event.callId) && !requestsSeen.has(event.callId) ? byCallId.get(event.callId) : undefined;
            requestsSeen.add(event.callId);
            if (o?.awaiting?.request) return o.awaiting.request;
            break;
          }
          case 'tool/approval-answer': {
            const stamped = log.append(event);
            if (inStep(event)) settled(event.callId);
            return stamped;
          }
          case 'step/end':
            if (inStep(event)) {
              ended = true;
              return log.append({
                ...event,
                finishReason: event.finishReason === REPLAY_FINISH ? pending.event.finishReason : event.finishReason,
                toolCalls: pending.stepCalls,
                ...(pending.event.usage ? { usage: pending.event.usage } : {}),
              });
            }
            break;
          default:
            break;
        }
      }
      return log.append(event);
    },
  };

  const heldResult = (callId: string): ToolResult | undefined => {
    const h = byCallId.get(callId)?.held;
    return h ? (deepFreeze(structuredClone(h)) as ToolResult) : undefined;
  };
  const isAwaiting = (p: PreparedCall) => awaiting.has(p.view.callId);

  const resumed: CallStages = {
    ...pipeline,
    prepare(request, where): PrepareOutcome {
      const o = byCallId.get(request.callId);
      if (!o) return pipeline.prepare(request, where);
      if (o.held) {
        // Settled before the suspension: it goes straight to finalizing, which gives its logged result.
        return { ok: false, error: { name: errorNameFor(ErrorCode.INTERRUPTED), code: ErrorCode.INTERRUPTED, message: 'held result' } };
      }
      // Validated again from the logged input, at its logged place, planned as its tool/call logged.
      const outcome = pipeline.prepare(request, { index: o.call.index, turnId, stepIndex });
      // A pending call that no longer validates (its tool gone, its schema changed) ends here, unasked.
      if (!outcome.ok) settled(request.callId);
      if (!outcome.ok || outcome.prepared.view.executionMode === o.call.executionMode) return outcome;
      const view = Object.freeze({ ...outcome.prepared.view, executionMode: o.call.executionMode });
      return { ok: true, prepared: { ...outcome.prepared, view } };
    },
    // Pending calls have their logged `ask`, so the stage is never skipped for them.
    hasPreExecute: () => awaiting.size > 0 || pipeline.hasPreExecute(),
    preExecute(p) {
      if (!isAwaiting(p)) return pipeline.preExecute(p);
      const reason = byCallId.get(p.view.callId)?.awaiting?.request?.reason;
      return reason !== undefined ? { kind: 'ask', reason } : { kind: 'ask' };
    },
    execute(p, signal) {
      if (unanswered.size === 0 || signal.aborted) return pipeline.execute(p, signal);
      return new Promise((resolve) => {
        let gone = false;
        const go = () => {
          if (gone) return;
          gone = true;
          signal.removeEventListener('abort', go);
          resolve(pipeline.execute(p, signal));
        };
        signal.addEventListener('abort', go, { once: true });
        void allAnswered.then(go);
      });
    },
    finalize(request, p, settlement, marks) {
      return heldResult(request.callId) ?? pipeline.finalize(request, p, settlement, marks);
    },
    record: (event) => void view.append(event),
  };

  return {
    model: replayModel(pending),
    log: view,
    pipeline: resumed,
    get ended() {
      return ended;
    },
    parkedAgain: settled,
  };
}
