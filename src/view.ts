/**
 * `dsh/view`: a UI's view of a session. `createSessionView` projects a runtime's log into frozen
 * snapshots of turns, steps, calls and approvals (a snapshot, once emitted, never changes);
 * `createApprovalInbox` queues the questions a page answers. Browser-safe; `dsh/react` reads
 * these views, `dsh/client` builds the same snapshots from a session served over the wire.
 *
 * @example
 * ```ts
 * import { createRuntime } from 'dsh';
 * import { createSessionView } from 'dsh/view';
 *
 * const rt = createRuntime({ tools: [] });
 * const view = createSessionView(rt);
 * view.subscribe(() => console.log(view.getSnapshot().turns.length));
 * ```
 *
 * @packageDocumentation
 */
export { createSessionView, type SessionView, type SessionViewBase, type SessionViewOptions, type SessionViewRuntime } from './view/sessionView.js';
export type { SessionSnapshot, SessionTurn, SessionTurnState, SessionStep, SessionCall, SessionCallStage, SessionApproval, SessionSteer, CallProgress } from './view/viewTypes.js';
export { createApprovalInbox, type ApprovalInbox, type ApprovalQuestion, type ApprovalReply } from './view/approvalInbox.js';
