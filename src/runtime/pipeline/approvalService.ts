/**
 * The approval service: who a call's `ask` is put to (a person, a policy service, a UI). Injected
 * through `createRuntime({ approval })`; the approval stage (approval.ts) asks it.
 */
import type { ApprovalAnswer, ApprovalDenial, ApprovalPreview } from '../../protocol/index.js';

/**
 * Answered by an approval service to suspend the turn on this question instead of answering it now
 * (issue 15.4): the question stays pending in the log, the turn's handle settles `suspended`, and
 * `resumeSession` (in this process or another) asks it again and continues the same call.
 */
export const SUSPEND = 'suspend' as const;

/** What an approval service is asked: the call, the policy's reason, and what the call would do. */
export interface ApprovalRequest {
  callId: string;
  toolName: string;
  args: unknown;
  reason?: string;
  /** A diff, the command, or the arguments (SPEC §10.5), bounded. */
  preview?: ApprovalPreview;
}

/**
 * Asks a person (or a policy service) whether a call may run. A denial may say why
 * (`{ answer: 'denied', reason }`): the reason is logged with the answer and reaches the model in
 * the call's `APPROVAL_DENIED` result.
 */
export interface ApprovalService {
  /** Asks about one call; resolves with the answer, a denial with the person's reason, or `SUSPEND`. `signal` aborts when the question is withdrawn. */
  request(req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer | ApprovalDenial | typeof SUSPEND>;
}

/** The longest denial reason passed on (a longer one is cut). */
export const MAX_DENIAL_REASON_CHARS = 2_000;

/** An approval service that suspends every question (answer later, after `resumeSession`). */
export const suspendingApproval: ApprovalService = { request: async () => SUSPEND };
