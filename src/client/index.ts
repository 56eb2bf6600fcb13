/**
 * `dsh/client`: a session served over the wire protocol (docs/protocol.md), in the page.
 * `connectSession(url)` gives a session view the `dsh/react` hooks take, with its controls.
 * Browser-safe.
 */
export { connectSession, SessionCommandError, type ConnectSessionOptions, type ConnectionStatus, type RemoteSession } from './connectSession.js';
export { sseFrames, SseFrameTooLarge, type SseFrame } from './sseFrames.js';
export type { SessionSnapshot, SessionTurn, SessionStep, SessionCall, SessionApproval, SessionSteer, SessionCallStage, SessionTurnState, CallProgress } from '../view/viewTypes.js';
export type { WinningAnswer, WireAnswer, WireErrorCode, CommandResult } from '../protocol/wire.js';
