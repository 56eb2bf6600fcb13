/**
 * `dsh/server`: a session served to web pages over the session wire protocol (docs/protocol.md):
 * `createSessionHandler` (a Fetch API handler), `toNodeListener` (for `node:http`), the sessions it
 * serves (`hostRuntime`, `memorySessionDirectory`, `jsonlSessionDirectory`).
 */
export { createSessionHandler, type Authorize, type SessionDirectory, type SessionHandler, type SessionHandlerOptions } from './sessionHandler.js';
export { hostRuntime, CommandRefused, type HostableRuntime, type HostRuntimeOptions, type HostedSession } from './hostedSession.js';
export { memorySessionDirectory, jsonlSessionDirectory, type JsonlSessionDirectoryOptions } from './sessionDirectories.js';
export { toNodeListener, type FetchHandler, type NodeListenerOptions } from './nodeListener.js';
export { SlowClientError } from './eventStream.js';
// The wire protocol's messages (versioned zod schemas), as docs/protocol.md describes them.
export {
  WIRE_PROTOCOL_VERSION,
  WIRE_SESSION_ID,
  LOG_FRAME,
  LIVE_FRAME,
  LiveFrameSchema,
  SessionSummarySchema,
  StartTurnCommandSchema,
  SteerCommandSchema,
  FollowUpCommandSchema,
  CancelCommandSchema,
  ResumeCommandSchema,
  ApprovalCommandSchema,
  CommandResultSchema,
  WinningAnswerSchema,
  WireActionSchema,
  WireAnswerSchema,
  WireErrorSchema,
  WireErrorCodeSchema,
  type LiveFrame,
  type SessionSummary,
  type StartTurnCommand,
  type SteerCommand,
  type CancelCommand,
  type ApprovalCommand,
  type CommandResult,
  type WinningAnswer,
  type WireAction,
  type WireAnswer,
  type WireError,
  type WireErrorCode,
} from '../protocol/wire.js';
export { postgresSessionDirectory, type StoredSessionsOptions } from './storedSessions.js';
