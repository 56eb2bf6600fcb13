/**
 * Stage 6 (SPEC §2.6, §8.8): `finalizeContent` once, then the result is materialised, deep-frozen
 * and shown to the `tools/result` observers, which can look and nothing else (they fail open).
 */
import { CALL_STAGE_NAMES } from '../../../machines/callStageNames.js';
import type { PreparedCall, Settlement, StageMarks } from '../../../machines/callStages.js';
import { describeThrown, ErrorCode, type ToolCallRequest, type ToolResult } from '../../protocol/index.js';
import { deepFreeze } from '../args.js';
import { errorInfo } from '../toolError.js';
import { isPromise } from './listenerAnswers.js';
import { toolOf } from './prepare.js';
import type { StageDeps } from './stageDeps.js';

/** Per-stage durations from entry marks: each stage lasts until the next one that was entered. */
function durations(marks: StageMarks, end: number): Record<string, number> {
  const entered = CALL_STAGE_NAMES.filter((s) => marks[s] !== undefined);
  const out: Record<string, number> = {};
  entered.forEach((s, i) => {
    const next = i + 1 < entered.length ? marks[entered[i + 1]!]! : end;
    out[s] = next - marks[s]!;
  });
  out.total = end - (marks.validating ?? end);
  return out;
}

/** The result of a settlement: finalizeContent applied to a success (its failure fails the call closed). */
function materialise(deps: Pick<StageDeps, 'log'>, request: ToolCallRequest, p: PreparedCall | undefined, settlement: Settlement): ToolResult {
  const toolName = p?.view.toolName ?? request.toolName;
  const decision = settlement.decision ? { decision: { ...settlement.decision } } : {};
  if (!settlement.ok) {
    return {
      callId: request.callId,
      toolName,
      isError: true,
      error: settlement.error,
      content: settlement.content ?? `${settlement.error.code}: ${settlement.error.message}`,
      metadata: { ...settlement.metadata },
      ...decision,
    };
  }
  let content = settlement.draft.content;
  const finalizeContent = p && toolOf(p).finalizeContent;
  if (finalizeContent) {
    try {
      const fixed = finalizeContent(content);
      if (typeof fixed !== 'string') throw new TypeError(`returned ${typeof fixed}, not a string`);
      content = fixed;
    } catch (e) {
      const message = describeThrown(e);
      deps.log.append({ type: 'hook/failed', turnId: p.view.turnId, stepIndex: p.view.stepIndex, callId: request.callId, hook: 'finalizeContent', listener: `${toolName}.finalizeContent`, message, failed: 'closed' });
      // The content it was fixing may have needed the fix: it does not reach the model.
      return {
        callId: request.callId,
        toolName,
        isError: true,
        error: errorInfo(ErrorCode.HOOK_FAILED, `finalizeContent of "${toolName}" failed: ${message}`),
        content: `HOOK_FAILED: finalizeContent of "${toolName}" failed`,
        metadata: { ...settlement.draft.metadata },
        ...decision,
      };
    }
  }
  const result: ToolResult = { callId: request.callId, toolName, isError: false, content, value: settlement.draft.value, metadata: { ...settlement.draft.metadata }, ...decision };
  if (settlement.draft.parts?.length) result.parts = [...settlement.draft.parts];
  return result;
}

/**
 * Deep-freezes a result `materialise` just made. Its own fields are plain data it assigned itself
 * (no accessor to step around), so the object is frozen as it is and only what its fields hold is walked.
 */
function freezeResult(result: ToolResult): ToolResult {
  for (const key in result) deepFreeze((result as Record<string, unknown>)[key]);
  return Object.freeze(result);
}

/** Builds, freezes and announces the result. Never throws: an observer's failure is logged and ignored. */
export function finalizeResult(
  deps: Pick<StageDeps, 'log' | 'hooks' | 'clock'>,
  request: ToolCallRequest,
  p: PreparedCall | undefined,
  settlement: Settlement,
  marks: StageMarks | undefined,
): ToolResult {
  const result = materialise(deps, request, p, settlement);
  if (marks) result.metadata.durationsMs = durations(marks, deps.clock.now());
  const frozen = freezeResult(result);
  for (const o of deps.hooks.list('tools/result')) {
    const failedOpen = (e: unknown) =>
      deps.log.append({ type: 'hook/failed', turnId: p?.view.turnId, stepIndex: p?.view.stepIndex, callId: request.callId, hook: 'tools/result', listener: o.name, message: describeThrown(e), failed: 'open' });
    try {
      const r: unknown = o.fn(frozen);
      // An async observer cannot hold the flow up, but its failure is still recorded, not lost.
      // Stryker disable next-line ConditionalExpression: a plain value through Promise.resolve never rejects
      if (isPromise(r)) Promise.resolve(r).then(undefined, failedOpen);
    } catch (e) {
      failedOpen(e);
    }
  }
  return frozen;
}
