/**
 * The attribute lists of the OpenTelemetry GenAI semantic conventions that dsh's spans and metrics
 * are checked against, as data. Copied from the attribute tables of
 * open-telemetry/semantic-conventions, commit 7b0c0fe1e6d7b7fc857ba496aad7919e368453e7 (2026-04-27,
 * the last before docs/gen-ai/ moved to open-telemetry/semantic-conventions-genai):
 * - docs/gen-ai/gen-ai-spans.md, "Inference" (span.gen_ai.inference.client) and "Execute tool span"
 *   (span.gen_ai.execute_tool.internal);
 * - docs/gen-ai/gen-ai-agent-spans.md, "Invoke agent internal span" (span.gen_ai.invoke_agent.internal);
 * - docs/gen-ai/gen-ai-metrics.md, `gen_ai.client.token.usage` and `gen_ai.client.operation.duration`.
 * `gen_ai.execute_tool.duration` is not in that commit (it came with the move): its attributes are
 * checked against the execute_tool span's.
 */
export const INFERENCE_SPAN = {
  required: ['gen_ai.operation.name', 'gen_ai.provider.name'],
  all: [
    'gen_ai.operation.name', 'gen_ai.provider.name', 'error.type', 'gen_ai.conversation.id', 'gen_ai.output.type',
    'gen_ai.request.choice.count', 'gen_ai.request.model', 'gen_ai.request.seed', 'gen_ai.request.stream', 'server.port',
    'gen_ai.request.frequency_penalty', 'gen_ai.request.max_tokens', 'gen_ai.request.presence_penalty',
    'gen_ai.request.stop_sequences', 'gen_ai.request.temperature', 'gen_ai.request.top_k', 'gen_ai.request.top_p',
    'gen_ai.response.finish_reasons', 'gen_ai.response.id', 'gen_ai.response.model', 'gen_ai.response.time_to_first_chunk',
    'gen_ai.usage.cache_creation.input_tokens', 'gen_ai.usage.cache_read.input_tokens', 'gen_ai.usage.input_tokens',
    'gen_ai.usage.output_tokens', 'gen_ai.usage.reasoning.output_tokens', 'server.address', 'gen_ai.input.messages',
    'gen_ai.output.messages', 'gen_ai.system_instructions', 'gen_ai.tool.definitions',
  ],
  /** "Span name SHOULD be `{gen_ai.operation.name} {gen_ai.request.model}`"; kind CLIENT. */
  kind: 'CLIENT',
} as const;

export const EXECUTE_TOOL_SPAN = {
  required: ['gen_ai.operation.name', 'gen_ai.tool.name'],
  all: [
    'gen_ai.operation.name', 'gen_ai.tool.name', 'error.type', 'gen_ai.tool.call.id', 'gen_ai.tool.description',
    'gen_ai.tool.type', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result',
  ],
  /** Opt-In: "This attribute may contain sensitive information." */
  optIn: ['gen_ai.tool.call.arguments', 'gen_ai.tool.call.result'],
  /** "Span name SHOULD be `execute_tool {gen_ai.tool.name}`"; kind INTERNAL. */
  kind: 'INTERNAL',
} as const;

export const INVOKE_AGENT_INTERNAL_SPAN = {
  required: ['gen_ai.operation.name', 'gen_ai.provider.name'],
  all: [
    'gen_ai.operation.name', 'gen_ai.provider.name', 'error.type', 'gen_ai.agent.description', 'gen_ai.agent.id',
    'gen_ai.agent.name', 'gen_ai.agent.version', 'gen_ai.conversation.id', 'gen_ai.data_source.id', 'gen_ai.output.type',
    'gen_ai.request.choice.count', 'gen_ai.request.model', 'gen_ai.request.seed', 'gen_ai.request.frequency_penalty',
    'gen_ai.request.max_tokens', 'gen_ai.request.presence_penalty', 'gen_ai.request.stop_sequences',
    'gen_ai.request.temperature', 'gen_ai.request.top_p', 'gen_ai.response.finish_reasons',
    'gen_ai.usage.cache_creation.input_tokens', 'gen_ai.usage.cache_read.input_tokens', 'gen_ai.usage.input_tokens',
    'gen_ai.usage.output_tokens', 'gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.system_instructions',
    'gen_ai.tool.definitions',
  ],
  /** "Span name SHOULD be `invoke_agent {gen_ai.agent.name}`"; kind INTERNAL. */
  kind: 'INTERNAL',
} as const;

export const TOKEN_USAGE_METRIC = {
  unit: '{token}',
  all: ['gen_ai.operation.name', 'gen_ai.provider.name', 'gen_ai.token.type', 'gen_ai.request.model', 'server.port', 'gen_ai.response.model', 'server.address'],
} as const;

export const OPERATION_DURATION_METRIC = {
  unit: 's',
  all: ['gen_ai.operation.name', 'gen_ai.provider.name', 'error.type', 'gen_ai.request.model', 'server.port', 'gen_ai.response.model', 'server.address'],
} as const;

/** The names a span may carry besides the conventions' own: dsh's, under `dsh.`. */
export const isDshOwn = (key: string): boolean => key.startsWith('dsh.');
