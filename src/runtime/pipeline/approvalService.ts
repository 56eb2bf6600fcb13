/**
 * The approval service: who a call's `ask` is put to (a person, a policy service, a UI). Injected
 * through `createRuntime({ approval })`; the approval stage (approval.ts) asks it.
 */
import type { ApprovalAnswer } from '../../protocol/index.js';

/**
 * Answered by an approval service to suspend the turn on this question instead of answering it now
 * (issue 15.4): the question stays pending in the log, the turn's handle settles `suspended`, and
 * `resumeSession` (in this process or another) asks it again and continues the same call.
 */
export const SUSPEND = 'suspend' as const;

/** Asks a person (or a policy service) whether a call may run. */
export interface ApprovalService {
  request(req: { callId: string; toolName: string; args: unknown; reason?: string }, signal: AbortSignal): Promise<ApprovalAnswer | typeof SUSPEND>;
}

/** An approval service that suspends every question (answer later, after `resumeSession`). */
export const suspendingApproval: ApprovalService = { request: async () => SUSPEND };
