/**
 * The port between the toolCall machine and the world: the machine decides *when* each stage
 * runs and where it goes next; injected `CallStages` do each stage's work (run listeners, the
 * body, the log). The runtime's implementation is `createCallStages` (src/runtime/pipeline/).
 * Everything here is types: browser-safe, no I/O.
 */
import type {
  ApprovalAnswer,
  ApprovalDenial,
  ApprovalPreview,
  ContentPart,
  DecisionProvenance,
  ExecutionMode,
  NewLogEvent,
  PreExecuteDecision,
  ToolCallRequest,
  ToolErrorInfo,
  ToolResult,
} from '../src/protocol/index.js';

/** A value, or a promise of it. */
export type SyncOrAsync<T> = T | Promise<T>;

/** What every hook listener sees of a call: frozen, including the args. */
export interface CallView {
  readonly callId: string;
  readonly toolName: string;
  /** Validated, deep-frozen arguments. Assigning to them throws (and fails the listener closed). */
  readonly args: unknown;
  /** The arguments exactly as the model sent them. */
  readonly rawInput: unknown;
  readonly index: number;
  readonly executionMode: ExecutionMode;
  readonly idempotent: boolean;
  readonly turnId?: string;
  readonly stepIndex?: number;
}

/** Where a call runs: its position in the step's batch, and the turn/step (absent for a lone call). */
export interface CallWhere {
  readonly index: number;
  readonly turnId?: string;
  readonly stepIndex?: number;
}

/** The outcome of the execute stage (body plus wrappers). */
export type ExecOutcome =
  | { readonly ok: true; readonly value: unknown }
  /** A failure may still carry content (replacing `CODE: message`) and metadata, e.g. a command's partial output. */
  | { readonly ok: false; readonly error: ToolErrorInfo; readonly content?: string; readonly metadata?: Readonly<Record<string, unknown>> };

/** A result in the making, as post-execute listeners see it. */
export interface ResultDraft {
  readonly value: unknown;
  readonly content: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Typed non-text parts (images, resources) following the content. */
  readonly parts?: readonly ContentPart[];
}

/** A call that resolved to a tool and passed validation. `tool` is opaque to the machines. */
export interface PreparedCall {
  readonly view: CallView;
  readonly tool: unknown;
}

/** A prepared call, or the error that ends it in `validating` (unknown tool, invalid arguments). */
export type PrepareOutcome =
  | { readonly ok: true; readonly prepared: PreparedCall }
  /** `hookFailure`: a user function the call needed before stage 1 (isConcurrencySafe) threw; logged as `hook/failed`. */
  | { readonly ok: false; readonly error: ToolErrorInfo; readonly hookFailure?: ListenerFailure };

/** Which user function failed, and how (what a `hook/failed` event records). */
export interface ListenerFailure {
  readonly hook: 'tools/pre-execute' | 'tools/guard' | 'tools/post-execute' | 'isConcurrencySafe';
  readonly listener: string;
  readonly message: string;
}

/** A listener that threw, returned nonsense or never answered (within its own `hookTimeoutMs`): the call fails closed. */
export interface StageFailure extends ListenerFailure {
  readonly kind: 'failed';
  readonly hook: 'tools/pre-execute' | 'tools/guard' | 'tools/post-execute';
}

/** A deny or ask with the listener that gave it (`by`, its registered name), for the result's `decision`. */
type Decided<K extends PreExecuteDecision['kind']> = Extract<PreExecuteDecision, { kind: K }> & { readonly by?: string };
/** An `ask` carries the preview its approval shows (made by the port, SPEC §10.5). */
export type PreExecuteOutcome = Decided<'allow'> | Decided<'deny'> | (Decided<'ask'> & { readonly preview?: ApprovalPreview }) | StageFailure;
/** What the guards said: undefined (pass), a denial naming its guard, or a failure. */
export type GuardOutcome = undefined | { readonly kind: 'deny'; readonly reason: string; readonly listener: string; readonly rule?: string } | StageFailure;
/** What the post-execute listeners made of a draft: accepted (maybe rewritten), blocked with feedback, invalid output, or a failure. */
export type PostExecuteOutcome =
  | { readonly kind: 'accepted'; readonly draft: ResultDraft }
  | { readonly kind: 'blocked'; readonly feedback: string; readonly listener: string }
  | { readonly kind: 'invalid-output'; readonly message: string }
  | StageFailure;

/** What {@link CallStages.planPostExecute} decided for a draft. */
export type PostExecutePlan = { readonly kind: 'skip' } | { readonly kind: 'run' } | { readonly kind: 'appliesTo-failed'; readonly listener: string; readonly message: string };

/** How a call ends before `finalizing` builds its result. */
export type Settlement = (
  | { readonly ok: true; readonly draft: ResultDraft }
  | { readonly ok: false; readonly error: ToolErrorInfo; readonly content?: string; readonly metadata?: Readonly<Record<string, unknown>> }
) & {
  /** The policy that denied, asked about, blocked or failed the call (the result's `decision`). */
  readonly decision?: DecisionProvenance;
};

/** Hook, approval, grace and per-call deadlines (ms), as `createRuntime({ limits })` sets them. */
export interface PipelineLimits {
  /**
   * Each asynchronous pre/post-execute listener gets this long, on its own, to answer (a
   * waterfall listener waiting on its `next()` is not charged for the listeners after it); one
   * that has not answered by then fails the call closed with HOOK_FAILED naming it. The stages
   * enforce it themselves: a pending stage always settles.
   */
  readonly hookTimeoutMs: number;
  /** An approval not answered by then is APPROVAL_DENIED. */
  readonly approvalTimeoutMs: number;
  /** After a cancel, how long a started body may take to settle before it is settled as ABORTED. */
  readonly abortGraceMs: number;
  /**
   * The per-call deadline: a dispatched call (its execute wrappers and body) that has not settled
   * this long after dispatch settles as TIMEOUT and its body's signal is aborted, whatever its
   * wrappers and body do (see `armDeadline`). Generous by default; `timeout()` wrappers are for
   * tighter, per-tool limits.
   */
  readonly callTimeoutMs: number;
}

/** Stage timestamps (clock ms) collected when the call is metered. */
export type StageMarks = Partial<Record<'validating' | 'preExecute' | 'awaitingApproval' | 'guard' | 'executing' | 'postExecute' | 'finalizing', number>>;

/** The call pipeline's port: the work behind each stage of the `toolCall` machine (`runtime.pipeline`). The machine decides when a stage runs; the port does it. */
export interface CallStages {
  readonly limits: PipelineLimits;
  /** The runtime clock's time (ms). */
  now(): number;
  /** Resolves the tool and validates the arguments (stage `validating`). */
  prepare(request: ToolCallRequest, where: CallWhere): PrepareOutcome;
  /** True when some pre-execute listener is registered (else the stage is skipped). */
  hasPreExecute(): boolean;
  /** True when the call has guards to consult (those registered when it started). */
  hasGuards(call: PreparedCall): boolean;
  /**
   * Whether the post-execute stage runs for this draft: no listener applies (it is skipped), some
   * does, or a listener's `appliesTo` threw while this was decided (the stage then fails the call
   * naming that listener). Asked once per draft; its answer travels with the call.
   */
  planPostExecute(call: PreparedCall, draft: ResultDraft): PostExecutePlan;
  /** Never rejects; a pending outcome settles within `hookTimeoutMs` of the last listener it waited on. */
  preExecute(call: PreparedCall): SyncOrAsync<PreExecuteOutcome>;
  /** True when an earlier `allowed-always` answer covers this call (no question is asked). */
  isApprovalRemembered(call: PreparedCall): boolean;
  /** Remembers an `allowed-always` answer for the call's approval keys. */
  rememberApproval(call: PreparedCall): void;
  /** The answer; a denial may carry the person's reason (it becomes the result's message). */
  requestApproval(call: PreparedCall, reason: string | undefined, signal: AbortSignal, preview?: ApprovalPreview): Promise<ApprovalAnswer | ApprovalDenial>;
  /** Consults the guards registered when the call started (stage `guard`): undefined passes. */
  guard(call: PreparedCall): GuardOutcome;
  /** Runs the execute wrappers and the tool's body (stage `executing`); never rejects. */
  execute(call: PreparedCall, signal: AbortSignal): Promise<ExecOutcome>;
  /**
   * Arms the per-call deadline (`limits.callTimeoutMs`) of a call being dispatched: `expired` is
   * called once with the TIMEOUT error if the deadline passes first; the returned function
   * disarms it. (A plain timer on the injected clock: an XState `after` here costs ~20 µs a call.)
   * Optional: a port without it puts no deadline on its calls.
   */
  armDeadline?(call: PreparedCall, expired: (error: ToolErrorInfo) => void): () => void;
  /** The first draft from the body's value; an output-schema failure gives INVALID_OUTPUT. */
  draftFromValue(call: PreparedCall, value: unknown): Settlement;
  /** Never rejects; a pending outcome settles within `hookTimeoutMs` of the last listener it waited on. */
  postExecute(call: PreparedCall, draft: ResultDraft, plan: PostExecutePlan): SyncOrAsync<PostExecuteOutcome>;
  /** Builds, freezes and announces the result (finalizeContent, then `tools/result` observers). */
  finalize(request: ToolCallRequest, call: PreparedCall | undefined, settlement: Settlement, marks: StageMarks | undefined): ToolResult;
  /** Appends an annotation event about this call to the session log. */
  record(event: NewLogEvent): void;
  /** True when per-stage timings should be collected for this call. */
  isMetered(call: PreparedCall): boolean;
}
