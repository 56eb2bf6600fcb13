/**
 * `dsh/protocol`: what a session log holds and what crosses a boundary, with no runtime: the zod
 * schemas and types of tool-call requests, results, decisions, error codes, token usage and log
 * events, and a log as text (`formatLog`). Browser-safe. A server, a dashboard or a replay tool
 * validates what it reads with these; the readers that project a log (`projectPrompt`,
 * `turnAnswer`, …) are in `dsh`.
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

// A log as text, one line an event (what `dsh log` prints).
export { formatEvent, formatLog, type LogTextOptions } from './protocol/logText.js';
