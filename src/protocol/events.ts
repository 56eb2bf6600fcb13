import * as z from 'zod';
import { ApprovalAnswerSchema } from './decisions.js';
import { ToolResultSchema } from './results.js';
import { TokenUsageSchema } from './usage.js';

const base = { seq: z.number().int().positive(), time: z.number() };
/** Where an event happened: absent for a call run on its own, outside any turn. */
const where = { turnId: z.string().optional(), stepIndex: z.number().int().nonnegative().optional() };

/** How a turn ended, as its `turn/end` event records it. */
export const TurnOutcomeSchema = z.enum(['completed', 'cancelled', 'failed', 'max-steps']);
/** How a turn ended: `completed`, `cancelled`, `failed` or `max-steps` (a suspended turn logs `turn/suspended` instead of ending). */
export type TurnOutcome = z.infer<typeof TurnOutcomeSchema>;

/** How a failed model request is classified for the retry policy (SPEC §5). */
export const RequestErrorKindSchema = z.enum(['context-overflow', 'retryable', 'aborted', 'fatal']);
/** How a failed model request is classified: context overflow, retryable, aborted or fatal. */
export type RequestErrorKind = z.infer<typeof RequestErrorKindSchema>;

/** Whether a call may overlap others (`parallel`) or runs alone (`exclusive`), as its `tool/call` logs it. */
export const ExecutionModeSchema = z.enum(['parallel', 'exclusive']);
/** `parallel` (concurrency-safe: may overlap) or `exclusive` (runs alone), SPEC §3. */
export type ExecutionMode = z.infer<typeof ExecutionModeSchema>;

/** `turn/start`: a turn began, with the user's input (and, for a follow-up, the turn it follows). */
export const TurnStartEvent = z.object({
  ...base,
  type: z.literal('turn/start'),
  turnId: z.string(),
  input: z.string(),
  /**
   * A turn queued by `followUp(message)` (`kind: 'follow-up'`), or made of a steering message that
   * arrived too late for its turn (`kind: 'late-steer'`): `after` is the turn it followed. Absent
   * for an ordinary turn (and in older logs).
   */
  followUp: z.object({ kind: z.enum(['follow-up', 'late-steer']), after: z.string() }).optional(),
});
/** `step/start`: a model request of the turn began. */
export const StepStartEvent = z.object({ ...base, type: z.literal('step/start'), turnId: z.string(), stepIndex: z.number().int().nonnegative() });
/** Coalesced model output: one event per contiguous run of text (or reasoning), not one per token. */
export const LlmStreamEvent = z.object({
  ...base,
  type: z.literal('llm/stream'),
  turnId: z.string(),
  stepIndex: z.number().int().nonnegative(),
  kind: z.enum(['text', 'reasoning']),
  text: z.string(),
  /**
   * On the last event of a reasoning block that closed with provider metadata (Anthropic's thinking
   * signature, redacted data): the block is replayed to the model with it. Absent in older logs.
   */
  providerMetadata: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
});
/** `tool/call`: the model asked for a call; logged before the call runs, in the model's order (SPEC §1, §8.10). */
export const ToolCallEvent = z.object({
  ...base,
  ...where,
  type: z.literal('tool/call'),
  callId: z.string(),
  toolName: z.string(),
  /** The arguments exactly as the model sent them (raw JSON text when it sent text). */
  input: z.unknown(),
  index: z.number().int().nonnegative(),
  executionMode: ExecutionModeSchema,
});
/** `tool/result`: a call's frozen result, committed in the model's order; `sourceEventSeqs` names its `tool/call`. */
export const ToolResultEvent = z.object({
  ...base,
  ...where,
  type: z.literal('tool/result'),
  callId: z.string(),
  toolName: z.string(),
  /** `seq` of the `tool/call` this result answers. */
  sourceEventSeqs: z.array(z.number().int().positive()).min(1),
  result: ToolResultSchema,
});
/** `step/end`: a step ended, with the model's finish reason and how many calls it asked for. */
export const StepEndEvent = z.object({
  ...base,
  type: z.literal('step/end'),
  turnId: z.string(),
  stepIndex: z.number().int().nonnegative(),
  finishReason: z.string(),
  toolCalls: z.number().int().nonnegative(),
  /** Tokens the provider reported for this step's requests (absent when it reported none, and in older logs). */
  usage: TokenUsageSchema.optional(),
});
/** `turn/end`: the turn ended, with its outcome; every turn has exactly one (SPEC §8.13). */
export const TurnEndEvent = z.object({
  ...base,
  type: z.literal('turn/end'),
  turnId: z.string(),
  outcome: TurnOutcomeSchema,
  steps: z.number().int().nonnegative(),
  error: z.string().optional(),
});
/** `agent/request-error`: a model request failed, and what the retry policy decided to do (SPEC §5). */
export const RequestErrorEvent = z.object({
  ...base,
  type: z.literal('agent/request-error'),
  turnId: z.string(),
  stepIndex: z.number().int().nonnegative(),
  attempt: z.number().int().positive(),
  kind: RequestErrorKindSchema,
  status: z.number().int().optional(),
  message: z.string(),
  /** What the retry policy decided: retry after a delay, compact then retry, or give up. */
  action: z.enum(['retry', 'compact', 'give-up']),
  delayMs: z.number().nonnegative().optional(),
});
/** `context/compacted`: the prompt was made smaller (results stubbed, turns folded) before a retry or a request. */
export const ContextCompactedEvent = z.object({
  ...base,
  type: z.literal('context/compacted'),
  turnId: z.string(),
  strategy: z.string(),
  /** `seq`s of the tool/result events whose model view is now a stub. */
  stubbedSeqs: z.array(z.number().int().positive()),
  /** Whole finished turns that left the prompt with this event (oldest first); `summary` stands in for them. */
  foldedTurnIds: z.array(z.string()).optional(),
  /** The cumulative summary the prompt shows in place of every folded turn (set with `foldedTurnIds`). */
  summary: z.string().optional(),
  beforeChars: z.number().int().nonnegative(),
  afterChars: z.number().int().nonnegative(),
});
/** `tool/approval-request`: a call asks the user, with the reason and a preview of what it would do. */
export const ApprovalRequestEvent = z.object({
  ...base,
  ...where,
  type: z.literal('tool/approval-request'),
  callId: z.string(),
  toolName: z.string(),
  reason: z.string().optional(),
});
/** `tool/approval-answer`: how the question was answered (or that it timed out, was cancelled, or was remembered). */
export const ApprovalAnswerEvent = z.object({
  ...base,
  ...where,
  type: z.literal('tool/approval-answer'),
  callId: z.string(),
  /** `timeout` and `cancelled` are recorded as such and deny like `denied`. */
  answer: z.union([ApprovalAnswerSchema, z.enum(['timeout', 'cancelled', 'remembered'])]),
});
/** `hook/failed`: a listener threw, returned nonsense or timed out; `failed` says whether the call failed closed or the failure was ignored (SPEC §5). */
export const HookFailedEvent = z.object({
  ...base,
  ...where,
  type: z.literal('hook/failed'),
  callId: z.string(),
  hook: z.enum(['tools/pre-execute', 'tools/guard', 'tools/execute', 'tools/post-execute', 'finalizeContent', 'tools/result', 'isConcurrencySafe']),
  listener: z.string(),
  message: z.string(),
  /** Closed: the call was denied/blocked. Open: the failure was ignored (observers). */
  failed: z.enum(['closed', 'open']),
});
/** `warning`: something went wrong without failing a call (a spill that could not be saved, a late outcome discarded), with a stable code. */
export const WarningEvent = z.object({
  ...base,
  ...where,
  type: z.literal('warning'),
  callId: z.string().optional(),
  code: z.string(),
  message: z.string(),
  data: z.record(z.string(), z.unknown()).optional(),
});
/** `tool/spilled`: a large result's full text was saved to the spill store; the model sees a preview and this locator (SPEC §4). */
export const SpilledEvent = z.object({
  ...base,
  ...where,
  type: z.literal('tool/spilled'),
  callId: z.string(),
  locator: z.string(),
  bytes: z.number().int().nonnegative(),
  lines: z.number().int().nonnegative(),
});
/**
 * What the runtime derives from the log up to this event (the prompt projection, open work, turn
 * count, remembered approvals: `state`, format `version`), so a resumed session starts from here
 * instead of replaying its history (issue 16.1). Written by the JSONL log every so many events;
 * nothing else reads it. `state` is checked when it is read: one that does not check out is
 * ignored, and the history replayed.
 */
export const CheckpointEvent = z.object({
  ...base,
  // Never set (a checkpoint belongs to no turn); declared so `event.turnId` reads on every event.
  ...where,
  type: z.literal('session/checkpoint'),
  version: z.number().int().positive(),
  state: z.record(z.string(), z.unknown()),
});

/**
 * Partial output or progress of a running call (`exec.progress(update)`), coalesced: at most a few
 * per second per call, the last one flushed before the call's result. Never part of the model's prompt.
 */
export const ToolProgressEvent = z.object({
  ...base,
  ...where,
  type: z.literal('tool/progress'),
  callId: z.string(),
  toolName: z.string(),
  /** Output produced since the previous `tool/progress` of the call (its tail, when longer than the bound). */
  output: z.string().optional(),
  /** Characters of output left out of `output` (the bound per event). */
  droppedChars: z.number().int().nonnegative().optional(),
  /** The latest status line, progress and total reported. */
  message: z.string().optional(),
  progress: z.number().optional(),
  total: z.number().optional(),
  /** How many `exec.progress` updates this event merges. */
  updates: z.number().int().positive(),
});
/**
 * A steering message (`turn.steer(message)`) entering the running turn before the model request of
 * step `stepIndex`: logged between steps (after the previous step's results and `step/end`, before
 * that step's `step/start`), or, when that request is a retry, inside the step before it.
 */
export const UserSteerEvent = z.object({
  ...base,
  type: z.literal('user/steer'),
  turnId: z.string(),
  stepIndex: z.number().int().nonnegative(),
  text: z.string(),
});

/**
 * A turn stopped on approvals that outlive the process (an approval service answered `suspend`).
 * The step's model response is complete; the calls in `calls` wait for their answers (their
 * `tool/approval-request` is logged), `held` are results of later calls of the step that already
 * settled but could not be committed before them (ordered commit); every other call of the step
 * without a `tool/result` has not started. Resuming the session from its log continues the same
 * step from here (src/runtime/resume/), without asking the model again.
 */
export const TurnSuspendedEvent = z.object({
  ...base,
  type: z.literal('turn/suspended'),
  turnId: z.string(),
  stepIndex: z.number().int().nonnegative(),
  /** The model's finish reason of the suspended step, for its `step/end`. */
  finishReason: z.string(),
  /** Tokens the suspended step's request used so far (its `step/end` reports them). */
  usage: TokenUsageSchema.optional(),
  calls: z.array(z.object({ callId: z.string(), callSeq: z.number().int().positive() })).min(1),
  held: z.array(z.object({ callId: z.string(), callSeq: z.number().int().positive(), result: ToolResultSchema })),
});

/** Every event of the session log, discriminated by `type`; a log line read back is validated against it. */
export const LogEventSchema = z.discriminatedUnion('type', [
  TurnStartEvent,
  StepStartEvent,
  LlmStreamEvent,
  ToolCallEvent,
  ToolResultEvent,
  StepEndEvent,
  TurnEndEvent,
  RequestErrorEvent,
  ContextCompactedEvent,
  ApprovalRequestEvent,
  ApprovalAnswerEvent,
  HookFailedEvent,
  WarningEvent,
  SpilledEvent,
  ToolProgressEvent,
  UserSteerEvent,
  TurnSuspendedEvent,
  CheckpointEvent,
]);
/** One event of the session log, with its `seq` and `time`. */
export type LogEvent = z.infer<typeof LogEventSchema>;
/** The `type` of a log event, such as `'tool/result'`. */
export type LogEventType = LogEvent['type'];
/** The log event of one type, e.g. `LogEventOf<'tool/result'>`. */
export type LogEventOf<T extends LogEventType> = Extract<LogEvent, { type: T }>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event before the log stamps it with `seq` and `time`. */
export type NewLogEvent = DistributiveOmit<LogEvent, 'seq' | 'time'>;

