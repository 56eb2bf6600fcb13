/**
 * The attribute, span and metric names dsh's telemetry writes. The `gen_ai.*` and `error.type` names are the OpenTelemetry GenAI semantic conventions' (docs/gen-ai/:
 * the inference span, the invoke_agent internal span, the execute_tool span, the client metrics);
 * `dsh.*` are dsh's own, for what the conventions have no name for (stages, policies, spills,
 * approvals, suspension). Browser-safe: names only.
 */

/** GenAI semantic-convention attribute names. */
export const GenAi = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageCacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  usageReasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  conversationId: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolDescription: 'gen_ai.tool.description',
  /** Opt-in content (`recordContent`). */
  toolCallArguments: 'gen_ai.tool.call.arguments',
  /** Opt-in content (`recordContent`). */
  toolCallResult: 'gen_ai.tool.call.result',
  tokenType: 'gen_ai.token.type',
  errorType: 'error.type',
} as const;

/** `gen_ai.operation.name` values dsh writes. */
export const Operation = { invokeAgent: 'invoke_agent', chat: 'chat', executeTool: 'execute_tool' } as const;

/** Metric instrument names (GenAI client metrics, and the execute_tool duration). */
export const Metric = {
  executeToolDuration: 'gen_ai.execute_tool.duration',
  operationDuration: 'gen_ai.client.operation.duration',
  tokenUsage: 'gen_ai.client.token.usage',
} as const;

/** dsh's own attribute names (no GenAI convention covers them). */
export const Dsh = {
  turnId: 'dsh.turn.id',
  turnOutcome: 'dsh.turn.outcome',
  turnSteps: 'dsh.turn.steps',
  turnResumed: 'dsh.turn.resumed',
  followUp: 'dsh.turn.follow_up',
  stepIndex: 'dsh.step.index',
  requestAttempt: 'dsh.request.attempt',
  requestAction: 'dsh.request.action',
  requestDelayMs: 'dsh.request.delay_ms',
  /** The HTTP status of a failed request, when the provider gave one. */
  requestStatus: 'dsh.request.status',
  callIndex: 'dsh.call.index',
  executionMode: 'dsh.call.execution_mode',
  callSuspended: 'dsh.call.suspended',
  callUnfinished: 'dsh.call.unfinished',
  stage: 'dsh.stage',
  stageOutcome: 'dsh.stage.outcome',
  stageDurationMs: 'dsh.stage.duration_ms',
  stageCode: 'dsh.stage.code',
  stageListener: 'dsh.stage.listener',
  policyDecision: 'dsh.policy.decision',
  policyStage: 'dsh.policy.stage',
  policyListener: 'dsh.policy.listener',
  /** Opt-in content (`recordContent`): a deny reason may quote the call. */
  policyReason: 'dsh.policy.reason',
  resultSpilled: 'dsh.result.spilled',
  spillBytes: 'dsh.spill.bytes',
  spillLines: 'dsh.spill.lines',
  resultHeldMs: 'dsh.result.held_ms',
  approvalAnswer: 'dsh.approval.answer',
  hook: 'dsh.hook',
  hookListener: 'dsh.hook.listener',
  hookFailed: 'dsh.hook.failed',
  warningCode: 'dsh.warning.code',
  compactionStrategy: 'dsh.context.strategy',
  suspendedCalls: 'dsh.suspended.calls',
  heldCalls: 'dsh.suspended.held',
} as const;

/** Span event names. */
export const SpanEvent = {
  /** `dsh.stage.<stage>`: one per pipeline stage the call passed, at the stage's start, with its duration. */
  stagePrefix: 'dsh.stage.',
  approvalRequested: 'dsh.approval.requested',
  approvalAnswered: 'dsh.approval.answered',
  spilled: 'dsh.result.spilled',
  held: 'dsh.result.held',
  hookFailed: 'dsh.hook.failed',
  warning: 'dsh.warning',
  compacted: 'dsh.context.compacted',
  steered: 'dsh.turn.steered',
  suspended: 'dsh.turn.suspended',
  resumed: 'dsh.turn.resumed',
} as const;
