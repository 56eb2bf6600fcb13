/**
 * `dsh/protocol`: what a session log holds, and the pure functions that read one, with no runtime.
 * The zod schemas and types of tool-call requests, results, decisions, error codes, token usage and
 * log events; and the readers of a log: its text (`formatLog`), the prompt a model would be sent
 * (`projectPrompt`), a turn's answer, its open work and a pending suspension. Browser-safe. A server,
 * a dashboard or a replay tool that only reads sessions needs this entry alone.
 *
 * @example
 * ```ts
 * import { LogEventSchema, formatLog } from 'dsh/protocol';
 *
 * const lines = ['{"seq":1,"time":0,"type":"turn/start","turnId":"t1","input":"hi"}'];
 * const events = lines.map((line) => LogEventSchema.parse(JSON.parse(line)));
 * console.log(formatLog(events));
 * ```
 *
 * @packageDocumentation
 */

// Requests, results, decisions, error codes and log events (zod schemas + types).
export { ErrorCode, ErrorCodeSchema } from './protocol/errorCodes.js';
export { ToolCallRequestSchema, ToolResultSchema, ContentPartSchema, ToolErrorInfoSchema, type ToolCallRequest, type ToolResult, type ContentPart, type ToolErrorInfo } from './protocol/results.js';
export {
  PreExecuteDecisionSchema,
  PostExecuteDecisionSchema,
  ApprovalAnswerSchema,
  ApprovalPreviewSchema,
  DecisionProvenanceSchema,
  type PreExecuteDecision,
  type PostExecuteDecision,
  type ApprovalAnswer,
  type ApprovalDenial,
  type ApprovalPreview,
  type DecisionProvenance,
} from './protocol/decisions.js';
export { LogEventSchema, TurnOutcomeSchema, ExecutionModeSchema, RequestErrorKindSchema, type LogEvent, type LogEventOf, type LogEventType, type NewLogEvent, type TurnOutcome, type ExecutionMode, type RequestErrorKind } from './protocol/events.js';
export { TokenUsageSchema, type TokenUsage } from './protocol/usage.js';

// The pure functions that read a log.
export { formatEvent, formatLog, type LogTextOptions } from './runtime/views/logText.js';
export { closeOpenWork, type ClosedWork } from './runtime/openWork.js';
export type { OpenWorkScope } from './runtime/log/sessionIndex.js';
export { pendingSuspensionOf, type PendingSuspension, type SuspendedStepCall } from './runtime/resume/pendingSuspension.js';
export { projectPrompt } from './runtime/projection/prompt.js';
export type { ProjectPromptOptions } from './runtime/projection/promptState.js';
export { promptSize } from './runtime/projection/promptSize.js';
export { turnAnswer, type TurnAnswer } from './runtime/projection/turnAnswer.js';
