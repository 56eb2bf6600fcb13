/**
 * The stage stream of a call: one `stage/entered` and one `stage/exited` event per pipeline stage
 * the call passes through (SPEC §2), in order, with the clock time and the stage's outcome. Built
 * by the pipeline's stages themselves (stageStream.ts), so stages that pass within one XState macrostep
 * (validating, a synchronous preExecute, guard) are seen as well. Types only: browser-safe.
 */
import type { ErrorCode } from '../../protocol/index.js';
import type { CallStageName } from '../../../machines/callStageNames.js';

export { CALL_STAGE_NAMES, type CallStageName } from '../../../machines/callStageNames.js';

/** What each stage can decide. `cancelled`: the call was cancelled while it waited in this stage. */
export interface StageOutcomeKinds {
  /** The tool resolved and the args validated, or not (`UNKNOWN_TOOL`, `INVALID_ARGS`, `HOOK_FAILED`). */
  validating: 'valid' | 'invalid';
  /** The pre-execute waterfall's decision; `failed`: a listener failed closed (`HOOK_FAILED`). */
  preExecute: 'allow' | 'ask' | 'deny' | 'failed' | 'cancelled';
  /** The approval answer, or how it ended unanswered. */
  awaitingApproval: 'allowed-once' | 'allowed-always' | 'denied' | 'timeout' | 'cancelled';
  guard: 'pass' | 'deny' | 'failed';
  /** The body (with its execute wrappers) produced a value, or an error (`code` says which: `ABORTED`, `TIMEOUT`, …). */
  executing: 'ok' | 'error';
  postExecute: 'accepted' | 'blocked' | 'invalid-output' | 'failed' | 'cancelled';
  /** The result the call settled with. */
  finalizing: 'ok' | 'error';
}

/** The outcome of one stage. */
export interface StageOutcome<S extends CallStageName = CallStageName> {
  readonly kind: StageOutcomeKinds[S];
  /** The error code, when the stage ended the call with an error (or, for `finalizing`, the result's). */
  readonly code?: ErrorCode;
  /** Why: the error message, a deny reason, a block's feedback. */
  readonly message?: string;
  /** The listener or guard that decided, when one did. */
  readonly listener?: string;
}

/** Which call a stage event is about. The call's actor is `call-<index>` under the step's `scheduler`. */
export interface StageEventCall {
  readonly callId: string;
  readonly toolName: string;
  /** Position in the step's batch (0 for a lone `runCall` unless given). */
  readonly index: number;
  readonly turnId?: string;
  readonly stepIndex?: number;
}

/** A call entered a stage at `at` (clock ms). */
export interface StageEnteredEvent extends StageEventCall {
  readonly type: 'stage/entered';
  readonly stage: CallStageName;
  readonly at: number;
}

/** A call left a stage at `at`, with its outcome. One per `stage/entered`, and before the next stage's. */
export type StageExitedEvent = {
  [S in CallStageName]: StageEventCall & {
    readonly type: 'stage/exited';
    readonly stage: S;
    readonly at: number;
    readonly enteredAt: number;
    /** `at - enteredAt`, on the runtime's clock. */
    readonly durationMs: number;
    readonly outcome: StageOutcome<S>;
  };
}[CallStageName];

/** A call's stage event: `stage/entered`, or `stage/exited` with its duration and outcome. */
export type CallStageEvent = StageEnteredEvent | StageExitedEvent;

/** Receives stage events synchronously, as the call moves. A listener that throws is logged (`STAGE_LISTENER_FAILED`) and kept. */
export type StageListener = (event: CallStageEvent) => void;
