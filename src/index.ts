/**
 * `dsh`: run the tool calls an AI model emits through an explicit, inspectable pipeline. This is
 * the browser-safe entry (no Node imports): the runtime, tools, hooks and policies that need no
 * RE2, the session log and its events, the session view, and a scripted model. Node-only adapters
 * (files, processes, MCP, the built-in tools) live in `dsh/node`; the machines alone in
 * `dsh/machines`. What is exported here is chosen on purpose and checked against `api/dsh.api.md`.
 *
 * @example
 * ```ts
 * import { z } from 'zod';
 * import { createRuntime, defineTool, scriptedModel } from 'dsh';
 *
 * const read = defineTool({ name: 'read', input: z.object({ path: z.string() }), execute: async ({ path }) => `contents of ${path}` });
 * const rt = createRuntime({ tools: [read] });
 * const model = scriptedModel([{ toolCalls: [{ toolName: 'read', input: { path: 'a.txt' } }] }, { text: 'done' }]);
 * const { outcome } = await rt.startTurn({ model, input: 'read a.txt' }).done;
 * ```
 *
 * @packageDocumentation
 */

// The runtime: one session's tools, listeners, log and turns.
export { createRuntime, defaultLimits, type RuntimeOptions } from './runtime/createRuntime.js';
export type { Runtime, RunCallOptions, CallHandle, FollowUpOptions } from './runtime/runtime.js';
export type { TurnOptions, TurnHandle, TurnResult, SteerOutcome, CompactFn } from './runtime/turn/types.js';
export type { TurnDelta } from './runtime/turnDeltas.js';
export type { TurnAnswer } from './runtime/projection/turnAnswer.js';
export { MessageLimitError, DEFAULT_MESSAGE_LIMITS, type MessageLimits, type MessageLimitCode } from './runtime/messageLimits.js';
export type { ArgLimits } from './runtime/args.js';
export { systemClock, ManualClock, type Clock } from './runtime/clock.js';

// Tools: definitions, what a body is given, what it may return or throw.
export { defineTool, type ToolSpec, type ToolDefinition, type AnyTool, type ExecContext, type PreviewContext } from './runtime/defineTool.js';
export { ToolError, type ToolErrorDetails } from './runtime/toolError.js';
export { toolOutput, type ToolOutput } from './runtime/toolOutput.js';
export type { ToolProgress } from './runtime/pipeline/progress.js';

// Hooks, guards and approvals: who decides each call.
export type { HookMap, HookName, PreExecuteListener, ExecuteWrapper, PostExecuteListener, ResultObserver, Guard, GuardDenial, ListenerOptions, ListenerWrapper } from './runtime/hooks.js';
export { forTool, forToolResult, guardFor, type TypedCallView, type CallOf, type DeepReadonly } from './runtime/typedHooks.js';
export { retry, type RetryOptions } from './runtime/wrappers/retry.js';
export { timeout, type TimeoutOptions } from './runtime/wrappers/timeout.js';
export { planMode, type PlanModeOptions } from './runtime/policies/planMode.js';
export { normaliseToolPath, type ToolPath } from './runtime/policies/toolPath.js';
export { SUSPEND, suspendingApproval, type ApprovalService, type ApprovalRequest } from './runtime/pipeline/approvalService.js';

// The protocol: requests, results, decisions, error codes and log events (zod schemas + types).
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
export type { CallView, ResultDraft, PipelineLimits, SyncOrAsync } from '../machines/callStages.js';
export type { ModelCallOptions } from '../machines/modelCallOptions.js';

// The session log, and the pure functions that read it.
export { createMemoryLog, type SessionLog, type LogSink } from './runtime/log/sessionLog.js';
export { formatEvent, formatLog, type LogTextOptions } from './runtime/views/logText.js';
export { closeOpenWork, type ClosedWork } from './runtime/openWork.js';
export type { OpenWorkScope } from './runtime/log/sessionIndex.js';
export { pendingSuspensionOf, type PendingSuspension, type SuspendedStepCall } from './runtime/resume/pendingSuspension.js';
export { projectPrompt } from './runtime/projection/prompt.js';
export type { ProjectPromptOptions } from './runtime/projection/promptState.js';
export { promptSize } from './runtime/projection/promptSize.js';
export { turnAnswer } from './runtime/projection/turnAnswer.js';

// The model's context: compaction, summaries, request retries.
export { stubOlderToolResults, compactionEvents, type Compactor, type CompactionOptions, type CompactionResult, type StubOlderToolResultsOptions } from './runtime/context/compaction.js';
export type { ContextWindow } from './runtime/context/fitContext.js';
export { digestSummarizer, modelSummarizer, type SummaryRequest, type TurnSummarizer } from './runtime/context/summarizer.js';
export type { FoldedTurn } from './runtime/context/turnDigest.js';
export { createRequestRetryPolicy, type RequestRetryPolicy, type RequestRetryPolicyOptions, type RetryPolicyInput, type RetryDecision, type RequestErrorInfo } from './runtime/requestErrors.js';

// Models: a scripted model for tests and demos, and the errors a provider throws.
export {
  scriptedModel,
  type ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedStep,
  type ScriptedRequest,
  type ScriptedResponse,
  type ScriptedToolCall,
  type ScriptedCall,
  type ScriptedStreamError,
  type ChunkDelay,
} from './adapters/model/scriptedModel.js';
export { apiCallError, contextOverflowError, rateLimitError, serverError } from './adapters/model/modelErrors.js';

// Spilled results: where oversized results are kept.
export { createMemorySpillStore, type MemorySpillStore, type MemorySpillStoreOptions } from './runtime/spill/memorySpillStore.js';
export type { SpillLineIndex } from './runtime/spill/lineIndex.js';
export type { SpillStore, SpillMeta, SpillSaveOptions, SpillRange, SpillChunk } from './runtime/spill/spillStore.js';
export { spillReferenceOf, type SpillReference } from './runtime/spill/spilledResult.js';

// Stored sessions: the store port, leases, a session opened on a store.
export { StoreConflictError, type SessionStore, type Lease, type StoreConflictCode } from './runtime/store/sessionStore.js';
export { openStoredSession, openStoredSessionLog, type OpenStoredSessionOptions, type HoldStoredSessionOptions, type OpenedStoredSession, type LeaseKeeper } from './runtime/store/storedSession.js';
export type { StoreSink, StoreSinkOptions } from './runtime/store/storeSink.js';

// The session view: a UI's frozen snapshots of turns, steps, calls and approvals.
export { createSessionView, type SessionView, type SessionViewBase, type SessionViewOptions, type SessionViewRuntime } from './view/sessionView.js';
export type { SessionSnapshot, SessionTurn, SessionTurnState, SessionStep, SessionCall, SessionCallStage, SessionApproval, SessionSteer, CallProgress } from './view/viewTypes.js';
export { createApprovalInbox, type ApprovalInbox, type ApprovalQuestion, type ApprovalReply } from './view/approvalInbox.js';

// Inspection: stage events, typed XState inspection events, Stately's inspector.
export { CALL_STAGE_NAMES, type CallStageName } from '../machines/callStageNames.js';
export type { CallStageEvent, StageEnteredEvent, StageExitedEvent, StageEventCall, StageListener, StageOutcome, StageOutcomeKinds } from './runtime/inspection/stageEvents.js';
export {
  combineInspect,
  typedInspectionEvent,
  callOfActor,
  isTurnSnapshot,
  isStepSnapshot,
  isSchedulerSnapshot,
  isToolCallSnapshot,
  type InspectOption,
  type DshInspectionEvent,
  type InspectedActorRef,
  type ActorCall,
  type TurnSnapshot,
  type StepSnapshot,
  type SchedulerSnapshot,
  type ToolCallSnapshot,
} from './runtime/inspection/inspectionEvents.js';
export { statelyInspectorOptions } from './runtime/inspection/inspectorPayload.js';

// Telemetry's injected shape (the projection itself is in `dsh/telemetry`).
export type { OtelApi, Telemetry, TelemetryOptions, TelemetryProjection } from './runtime/telemetry/telemetryOptions.js';
export type { ModelRequestListener, ModelRequestWatch } from './runtime/telemetry/observeModel.js';
