/**
 * The runtime's `CallStages` (the port of machines/callStages.ts): one function per stage, each
 * in its own file beside this one; this file only assembles them around shared dependencies.
 * Synchronous listeners keep a stage synchronous; only a listener that returns a promise makes the
 * stage wait.
 */
import type { CallStages } from '../../../machines/callStages.js';
import { createApprovalStage } from './approval.js';
import { withApprovalPreview } from './approvalPreview.js';
import { draftFromValue } from './draft.js';
import { onceDurable } from './durableDispatch.js';
import { withoutSpilledValue } from '../spill/spilledResult.js';
import { armCallDeadline, runExecute } from './execute.js';
import { finalizeResult } from './finalize.js';
import { hasGuards, runGuards } from './guard.js';
import { planPostExecute, runPostExecute } from './postExecute.js';
import { hasPreExecute, runPreExecute } from './preExecute.js';
import { prepareCall } from './prepare.js';
import type { StageDeps } from './stageDeps.js';

export type CallStagesDeps = StageDeps;

export function createCallStages(deps: CallStagesDeps): CallStages {
  const approval = createApprovalStage(deps);
  return {
    limits: deps.limits,
    now: () => deps.clock.now(),
    prepare: (request, at) => prepareCall(deps, request, at),
    hasPreExecute: () => hasPreExecute(deps),
    // An `ask` gets the preview its question shows (and its tool/approval-request logs).
    preExecute: (p) => withApprovalPreview(deps, runPreExecute(deps, p), p, approval.isRemembered),
    isApprovalRemembered: approval.isRemembered,
    rememberApproval: approval.remember,
    requestApproval: approval.request,
    hasGuards: (p) => hasGuards(deps, p),
    guard: (p) => runGuards(deps, p),
    // No body before its tool/call is durable (durableDispatch.ts).
    execute: (p, signal) => onceDurable(deps.log, () => runExecute(deps, p, signal)),
    armDeadline: (_p, expired) => armCallDeadline(deps, expired),
    draftFromValue,
    planPostExecute: (p, draft) => planPostExecute(deps, p, draft),
    // A spilled result keeps its preview and locator, never its full value (SPEC §4).
    postExecute: (p, draft, plan) => {
      const outcome = runPostExecute(deps, p, draft, plan);
      return outcome instanceof Promise ? outcome.then(withoutSpilledValue) : withoutSpilledValue(outcome);
    },
    finalize: (request, p, settlement, marks) => finalizeResult(deps, request, p, settlement, marks),
    record: (event) => void deps.log.append(event),
    isMetered: () => deps.stageTimings === true,
  };
}
