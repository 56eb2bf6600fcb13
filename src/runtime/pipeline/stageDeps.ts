/**
 * What the stages of a call are given: the registries, the log, the clock and the limits. One
 * object shared by every stage of every call (see `createCallStages`).
 */
import type { CallView, PipelineLimits } from '../../../machines/callStages.js';
import type { ArgLimits } from '../args.js';
import type { Clock } from '../clock.js';
import type { ToolRegistry } from '../defineTool.js';
import type { GuardRegistry, HookRegistry } from '../hooks.js';
import type { SessionLog } from '../log/sessionLog.js';
import type { ApprovalService } from './approvalService.js';
import type { SuspensionRequests } from '../resume/suspendTurn.js';

export interface StageDeps {
  readonly tools: ToolRegistry;
  readonly hooks: HookRegistry;
  readonly guards: GuardRegistry;
  readonly log: SessionLog;
  readonly clock: Clock;
  readonly limits: PipelineLimits;
  readonly argLimits: ArgLimits;
  readonly approval?: ApprovalService;
  /** Where a `suspend` answer parks its call (a call outside a running turn cannot park: it is denied). */
  readonly suspensions: SuspensionRequests;
  /** Deep-frozen shared context handed to bodies. */
  readonly context: Readonly<Record<string, unknown>>;
  /** Spacing of one call's `tool/progress` events (default `DEFAULT_PROGRESS_INTERVAL_MS`). */
  readonly progressIntervalMs?: number;
  /** Results carry their per-stage durations (`metadata.durationsMs`). */
  readonly stageTimings?: boolean;
}

/** Where a call's events go in the log. */
export function placeOf(view: CallView): { turnId?: string; stepIndex?: number; callId: string } {
  return { turnId: view.turnId, stepIndex: view.stepIndex, callId: view.callId };
}
