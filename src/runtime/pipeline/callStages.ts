/**
 * The runtime's `CallStages` (the port of machines/callStages.ts): one function per stage, each
 * in its own file beside this one; this file only assembles them around shared dependencies and
 * the explicit inputs every stage has: its report to the stage stream (inspection, telemetry),
 * durability before the body, and spilled values dropped after it.
 * Synchronous listeners keep a stage synchronous; only a listener that returns a promise makes the
 * stage wait.
 */
import type { CallStages, CallWhere, PostExecutePlan, PreExecuteOutcome, PreparedCall, ResultDraft, Settlement, StageMarks } from '../../../machines/callStages.js';
import type { ToolCallRequest } from '../../protocol/index.js';
import type { StageReports } from '../inspection/stageStream.js';
import { createApprovalStage } from './approval.js';
import { withApprovalPreview } from './approvalPreview.js';
import { draftFromValue } from './draft.js';
import { withoutSpilledValue } from '../spill/spilledResult.js';
import { armCallDeadline, runExecute } from './execute.js';
import { finalizeResult } from './finalize.js';
import { hasGuards, runGuards } from './guard.js';
import { isPromise } from './listenerAnswers.js';
import { planPostExecute, runPostExecute } from './postExecute.js';
import { hasPreExecute, runPreExecute } from './preExecute.js';
import { prepareCall } from './prepare.js';
import type { StageDeps } from './stageDeps.js';

export interface CallStagesDeps extends StageDeps {
  /** Where each stage reports itself (inspection, telemetry): heard only while someone listens. */
  readonly stages: StageReports;
}

export function createCallStages(deps: CallStagesDeps): CallStages {
  const { stages } = deps;
  const approval = createApprovalStage(deps);
  // Each stage's own work, handed to its report (stageStream.ts) by the port below.
  const prepare = (request: ToolCallRequest, at: CallWhere) => prepareCall(deps, request, at);
  // An `ask` that will be put gets the preview its question shows (and its tool/approval-request
  // logs); any other answer goes on as it is, without a look at the preview's file.
  const withPreview = (p: PreparedCall, o: PreExecuteOutcome) => (o.kind === 'ask' && !approval.isRemembered(p) ? withApprovalPreview(deps, o, p) : o);
  const preExecute = (p: PreparedCall) => {
    const outcome = runPreExecute(deps, p);
    return isPromise(outcome) ? outcome.then((o) => withPreview(p, o)) : withPreview(p, outcome);
  };
  const guard = (p: PreparedCall) => runGuards(deps, p);
  // A spilled result keeps its preview and locator, never its full value (SPEC §4).
  const postExecute = (p: PreparedCall, draft: ResultDraft, plan: PostExecutePlan) => {
    const outcome = runPostExecute(deps, p, draft, plan);
    return outcome instanceof Promise ? outcome.then(withoutSpilledValue) : withoutSpilledValue(outcome);
  };
  const finalize = (request: ToolCallRequest, p: PreparedCall | undefined, settlement: Settlement, marks: StageMarks | undefined) =>
    finalizeResult(deps, request, p, settlement, marks);
  return {
    limits: deps.limits,
    now: () => deps.clock.now(),
    prepare: (request, at) => stages.validating(request, at, prepare),
    hasPreExecute: () => hasPreExecute(deps),
    preExecute: (p) => stages.preExecute(p, preExecute),
    isApprovalRemembered: approval.isRemembered,
    rememberApproval: approval.remember,
    requestApproval: (p, reason, signal, preview) => {
      stages.awaitingApproval(p);
      return approval.request(p, reason, signal, preview);
    },
    hasGuards: (p) => hasGuards(deps, p),
    guard: (p) => stages.guard(p, guard),
    // No body before its tool/call is durable (execute.ts).
    execute: (p, signal) => {
      stages.executing(p);
      return runExecute(deps, p, signal);
    },
    armDeadline: (_p, expired) => armCallDeadline(deps, expired),
    draftFromValue,
    planPostExecute: (p, draft) => planPostExecute(deps, p, draft),
    postExecute: (p, draft, plan) => stages.postExecute(p, draft, plan, postExecute),
    finalize: (request, p, settlement, marks) => stages.finalizing(request, p, settlement, marks, finalize),
    record: (event) => {
      deps.log.append(event);
      stages.recorded(event);
    },
    isMetered: () => deps.stageTimings === true,
  };
}
