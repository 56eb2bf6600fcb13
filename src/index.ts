/**
 * `dsh`: run the tool calls an AI model emits through an explicit, inspectable pipeline. This is
 * the browser-safe entry (no Node imports) with what an agent needs: the runtime, tools, hooks,
 * guards, approvals and the policies that need no RE2, the session log and its readers, context
 * compaction and a scripted model. Each other concern has its own entry, so that a page ships only
 * what it uses: the log's events (zod schemas and types) in `dsh/protocol`, session and spill
 * stores in `dsh/store`, a UI's session view in `dsh/view`, stage and inspection events in
 * `dsh/inspection`, OpenTelemetry in `dsh/telemetry`, path tests in `dsh/testing`, Node-only
 * adapters (files, processes, MCP, the built-in tools) in `dsh/node`, the machines alone in
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
export { MessageLimitError, DEFAULT_MESSAGE_LIMITS, type MessageLimits, type MessageLimitCode } from './runtime/messageLimits.js';
export type { ArgLimits } from './runtime/args.js';
export { systemClock, ManualClock, type Clock } from './runtime/clock.js';

// Tools: definitions, what a body is given, what it may return or throw.
export { defineTool, type ToolSpec, type ToolDefinition, type AnyTool, type ExecContext, type PreviewContext } from './runtime/defineTool.js';
export { ToolError, type ToolErrorDetails } from './runtime/toolError.js';
export { toolOutput, type ToolOutput } from './runtime/pipeline/draft.js';
export type { ToolProgress } from './runtime/pipeline/progress.js';
export { ErrorCode } from './protocol/errorCodes.js';

// Hooks, guards and approvals: who decides each call.
export type { HookMap, HookName, PreExecuteListener, ExecuteWrapper, PostExecuteListener, ResultObserver, Guard, GuardDenial, ListenerOptions, ListenerWrapper } from './runtime/hooks.js';
export { forTool, forToolResult, guardFor, type TypedCallView, type CallOf, type DeepReadonly } from './runtime/typedHooks.js';
export { retry, type RetryOptions } from './runtime/wrappers/retry.js';
export { timeout, type TimeoutOptions } from './runtime/wrappers/timeout.js';
export { planMode, type PlanModeOptions } from './runtime/policies/planMode.js';
export { normaliseToolPath, type ToolPath } from './runtime/policies/toolPath.js';
export { SUSPEND, suspendingApproval, type ApprovalService, type ApprovalRequest } from './runtime/pipeline/approvalService.js';

// The session log: the append-only truth a runtime writes.
export { createMemoryLog, type SessionLog, type LogSink } from './runtime/log/sessionLog.js';

// The pure functions that read a log (its events' schemas and types, and its text: `dsh/protocol`).
export { closeOpenWork, type ClosedWork } from './runtime/openWork.js';
export type { OpenWorkScope } from './runtime/log/sessionIndex.js';
export { pendingSuspensionOf, type PendingSuspension, type SuspendedStepCall } from './runtime/resume/pendingSuspension.js';
export { projectPrompt } from './runtime/projection/prompt.js';
export type { ProjectPromptOptions } from './runtime/projection/promptState.js';
export { promptSize } from './runtime/projection/promptSize.js';
export { turnAnswer, type TurnAnswer } from './runtime/projection/turnAnswer.js';

// The model's context: compaction, summaries, request retries.
export { stubOlderToolResults, compactionEvents, type Compactor, type CompactionOptions, type CompactionResult, type StubOlderToolResultsOptions } from './runtime/context/compaction.js';
export type { ContextWindow } from './runtime/context/fitContext.js';
export { digestSummarizer, modelSummarizer, type SummaryRequest, type TurnSummarizer } from './runtime/context/summarizer.js';
export type { FoldedTurn } from './runtime/context/turnDigest.js';
export { createRequestRetryPolicy, type RequestRetryPolicy, type RequestRetryPolicyOptions, type RetryPolicyInput, type RetryDecision, type RequestErrorInfo } from './runtime/requestErrors.js';

// Models: a scripted model for tests and demos, no network (provider errors to script: `dsh/testing`).
export { scriptedModel, type ScriptedModel, type ScriptedModelOptions, type ScriptedStep, type ScriptedRequest, type ScriptedResponse, type ScriptedToolCall } from './adapters/model/scriptedModel.js';
