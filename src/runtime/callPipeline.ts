/**
 * The runtime side of the toolCall machine's port: runs the listeners of each stage, the body
 * with its around-wrappers, and materialises results. Synchronous listeners keep a stage
 * synchronous; only a listener that returns a promise makes the stage wait.
 */
import { anySignal } from 'any-signal';
import {
  ApprovalAnswerSchema,
  ErrorCode,
  ErrorCodeSchema,
  errorNameFor,
  type ApprovalAnswer,
  type NewLogEvent,
  type PostExecuteDecision,
  type PreExecuteDecision,
  type ToolCallRequest,
  type ToolErrorInfo,
  type ToolResult,
} from '../protocol/index.js';
import type {
  CallPipeline,
  CallView,
  CallWhere,
  ExecOutcome,
  GuardOutcome,
  PipelineLimits,
  PostExecuteOutcome,
  PreExecuteOutcome,
  PrepareOutcome,
  PreparedCall,
  ResultDraft,
  Settlement,
  StageMarks,
  StageTrace,
  SyncOrAsync,
} from '../../machines/callPipeline.js';
import { deepFreeze, parseArgs, type ArgLimits } from './args.js';
import type { Clock } from './clock.js';
import type { AnyTool, ExecContext, ToolRegistry } from './defineTool.js';
import type { GuardRegistry, HookRegistry } from './hooks.js';
import type { SessionLog } from './log/sessionLog.js';
import { toErrorInfo, ToolError } from './toolError.js';
import { isMetricsWrapper } from './wrappers/metrics.js';
import { isToolOutput } from './toolOutput.js';

/** Asks a person (or a policy service) whether a call may run. */
export interface ApprovalService {
  request(req: { callId: string; toolName: string; args: unknown; reason?: string }, signal: AbortSignal): Promise<ApprovalAnswer>;
}

export interface CallPipelineDeps {
  tools: ToolRegistry;
  hooks: HookRegistry;
  guards: GuardRegistry;
  log: SessionLog;
  clock: Clock;
  limits: PipelineLimits;
  argLimits: ArgLimits;
  approval?: ApprovalService;
  /** Deep-frozen shared context handed to bodies. */
  context: Readonly<Record<string, unknown>>;
}

const isPromise = (v: unknown): v is Promise<unknown> =>
  v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';

const info = (code: ErrorCode, message: string): ToolErrorInfo => ({ name: errorNameFor(code), code, message });

const message = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

/** Canonical JSON (sorted keys) so identical args give identical approval keys. */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

/** Names what an invalid decision was without echoing it: it may hold the very content being redacted. */
function describeDecision(d: unknown): string {
  if (d === null || typeof d !== 'object') return `(${d === null ? 'null' : typeof d})`;
  const kind = (d as { kind?: unknown }).kind;
  return typeof kind === 'string' ? `(kind ${JSON.stringify(kind.slice(0, 40))})` : '(an object without a kind)';
}

function isPreDecision(d: unknown): d is PreExecuteDecision {
  if (!d || typeof d !== 'object') return false;
  const k = (d as { kind?: unknown }).kind;
  if (k === 'allow') return true;
  if (k === 'deny') return typeof (d as { reason?: unknown }).reason === 'string';
  if (k === 'ask') return (d as { reason?: unknown }).reason === undefined || typeof (d as { reason?: unknown }).reason === 'string';
  return false;
}

function isPostDecision(d: unknown): d is PostExecuteDecision {
  if (!d || typeof d !== 'object') return false;
  const k = (d as { kind?: unknown }).kind;
  if (k === 'block') return typeof (d as { feedback?: unknown }).feedback === 'string';
  if (k !== 'accept') return false;
  const a = d as { content?: unknown; metadata?: unknown };
  return (a.content === undefined || typeof a.content === 'string') && (a.metadata === undefined || (typeof a.metadata === 'object' && a.metadata !== null));
}

const ALLOW: PreExecuteDecision = Object.freeze({ kind: 'allow' });

/**
 * Results carry only the stable codes of SPEC §6 (the log schema and every layer that routes on
 * `code` rely on it): a failure with any other code, or none, becomes TOOL_FAILED, keeping its text.
 */
function wellFormedOutcome(o: ExecOutcome): ExecOutcome {
  if (o.ok) return o;
  const e = o.error as Partial<ToolErrorInfo> | undefined;
  const text = typeof e?.message === 'string' ? e.message : String(e?.message ?? 'the tool failed');
  const extra = failureDetails(o);
  if (ErrorCodeSchema.safeParse(e?.code).success) {
    if (typeof e!.name === 'string' && typeof e!.message === 'string') return { ok: false, error: o.error, ...extra };
    return { ok: false, error: info(e!.code!, text), ...extra };
  }
  return { ok: false, error: info(ErrorCode.TOOL_FAILED, `${text} (unknown error code ${JSON.stringify(String(e?.code))})`), ...extra };
}

/** The content and metadata a failure carries, kept only when well-formed (a string, a plain object). */
function failureDetails(d: { content?: unknown; metadata?: unknown } | undefined): { content?: string; metadata?: Record<string, unknown> } {
  const out: { content?: string; metadata?: Record<string, unknown> } = {};
  if (typeof d?.content === 'string') out.content = d.content;
  const m = d?.metadata;
  if (m !== null && typeof m === 'object' && !Array.isArray(m)) out.metadata = { ...(m as Record<string, unknown>) };
  return out;
}

export function createCallPipeline(deps: CallPipelineDeps): CallPipeline {
  const { tools, hooks, guards, log, clock, limits } = deps;
  const remembered = new Set<string>();
  const toolOf = (p: PreparedCall) => p.tool as AnyTool;
  const approvalKey = (p: PreparedCall) => `${p.view.toolName}\u0000${canonicalJson(p.view.args)}`;
  const where = (v: CallView) => ({ turnId: v.turnId, stepIndex: v.stepIndex, callId: v.callId });

  function contentOf(tool: AnyTool, value: unknown): string {
    const content: unknown = tool.toContent(value);
    if (typeof content !== 'string') throw new TypeError(`returned ${content === null ? 'null' : typeof content}, not a string`);
    return content;
  }

  function metadataOf(tool: AnyTool, value: unknown): Record<string, unknown> {
    if (!tool.toMetadata) return {};
    const m: unknown = tool.toMetadata(value);
    if (m === null || typeof m !== 'object' || Array.isArray(m)) throw new TypeError(`toMetadata returned ${m === null ? 'null' : Array.isArray(m) ? 'an array' : typeof m}, not an object`);
    return { ...(m as Record<string, unknown>) };
  }

  function validateOutput(tool: AnyTool, value: unknown): { ok: true; value: unknown } | { ok: false; message: string } {
    if (!tool.output) return { ok: true, value };
    let parsed: ReturnType<NonNullable<AnyTool['output']>['safeParse']>;
    try {
      parsed = tool.output.safeParse(value);
    } catch (e) {
      // A schema whose own check throws (a buggy refine, a hostile getter) cannot vouch for the value.
      return { ok: false, message: `output of "${tool.name}" could not be checked against its output schema: ${message(e)}` };
    }
    if (parsed.success) return { ok: true, value: parsed.data };
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((i: { path: PropertyKey[]; message: string }) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    return { ok: false, message: `output of "${tool.name}" does not match its output schema: ${issues}` };
  }

  function execContext(view: CallView, signal: AbortSignal): ExecContext {
    return {
      signal,
      callId: view.callId,
      clock,
      attempt: 1,
      context: deps.context,
      warn: (code, text, data) => log.append({ type: 'warning', ...where(view), code, message: text, data }),
    };
  }

  async function runBody(p: PreparedCall, exec: ExecContext, callerSignal: AbortSignal): Promise<ExecOutcome> {
    // A wrapper may have replaced the signal: fuse it with the caller's so a caller abort always reaches the body.
    const fused = exec.signal === callerSignal ? undefined : anySignal([callerSignal, exec.signal]);
    const signal = fused ?? callerSignal;
    try {
      if (signal.aborted) return { ok: false, error: abortInfo(signal) };
      const value = await toolOf(p).execute(p.view.args, fused ? { ...exec, signal } : exec);
      return { ok: true, value };
    } catch (e) {
      if (e instanceof ToolError) return { ok: false, error: e.toInfo(), ...failureDetails(e.details) };
      if (signal.aborted) return { ok: false, error: abortInfo(signal) };
      return { ok: false, error: toErrorInfo(e, ErrorCode.TOOL_FAILED) };
    } finally {
      fused?.clear();
    }
  }

  function abortInfo(signal: AbortSignal): ToolErrorInfo {
    const reason = signal.reason as unknown;
    if (reason instanceof ToolError) return reason.toInfo();
    return info(ErrorCode.ABORTED, `aborted: ${reason instanceof Error ? reason.message : String(reason ?? 'cancelled')}`);
  }

  return {
    limits,
    now: () => clock.now(),

    prepare(request: ToolCallRequest, at: CallWhere): PrepareOutcome {
      const tool = tools.get(request.toolName);
      if (!tool) {
        const known = tools.list().map((t) => t.name);
        return {
          ok: false,
          error: info(ErrorCode.UNKNOWN_TOOL, `unknown tool "${request.toolName}"; available: ${known.join(', ') || '(none)'}`),
        };
      }
      let args: unknown;
      try {
        args = parseArgs(tool, request.input, deps.argLimits);
      } catch (e) {
        return { ok: false, error: toErrorInfo(e, ErrorCode.INVALID_ARGS) };
      }
      // An already-parsed input is the very object the log records as `tool/call.input`, and
      // listeners see it as `rawInput`: frozen too, so nobody can rewrite history through it.
      deepFreeze(request.input);
      let safe = false;
      try {
        safe = tool.isConcurrencySafe(args) === true;
      } catch {
        safe = false; // An undecidable call is treated as exclusive: the conservative choice.
      }
      const view: CallView = Object.freeze({
        callId: request.callId,
        toolName: tool.name,
        args,
        rawInput: request.input,
        index: at.index,
        executionMode: safe ? 'parallel' : 'exclusive',
        idempotent: tool.idempotent,
        turnId: at.turnId,
        stepIndex: at.stepIndex,
      });
      return { ok: true, prepared: { view, tool } };
    },

    hasPreExecute: () => hooks.list('tools/pre-execute').length > 0,
    hasGuards: () => guards.list().length > 0,
    hasPostExecute: (p, draft) => hooks.list('tools/post-execute').some((l) => !l.appliesTo || l.appliesTo(draft, p.view)),

    preExecute(p: PreparedCall, trace: StageTrace): SyncOrAsync<PreExecuteOutcome> {
      const listeners = hooks.list('tools/pre-execute');
      // The first failure decides, even if an earlier listener catches its next() rejection (SPEC §8.2).
      let failure: { listener: string; message: string } | undefined;
      const failed = (): PreExecuteOutcome => ({
        kind: 'failed',
        hook: 'tools/pre-execute',
        ...(failure ?? { listener: trace.listener ?? '?', message: 'the pre-execute chain failed' }),
      });
      const noteFailure = (listener: string, e: unknown) => {
        failure ??= { listener, message: message(e) };
        return e;
      };
      // The trace names the innermost listener that has not answered yet: when a listener hangs
      // after its next() came back, it is the one a hook timeout must name, not the last consulted.
      const pending: boolean[] = [];
      const answered = (i: number) => {
        pending[i] = false;
        const j = pending.lastIndexOf(true);
        if (j >= 0) trace.listener = listeners[j]!.name;
      };
      // Every listener promise, so that a chain an earlier listener started but did not wait for
      // is still waited for: its failure fails the call too (and is never an unhandled rejection).
      const started: Promise<unknown>[] = [];
      const dispatch = (i: number): SyncOrAsync<PreExecuteDecision> => {
        if (i >= listeners.length) return ALLOW;
        const l = listeners[i]!;
        pending[i] = true;
        trace.listener = l.name;
        let nextResult: SyncOrAsync<PreExecuteDecision> | undefined;
        let nextCalled = false;
        const next = () => {
          if (!nextCalled) {
            nextCalled = true;
            nextResult = dispatch(i + 1);
          }
          return nextResult!;
        };
        const settle = (d: PreExecuteDecision | void): SyncOrAsync<PreExecuteDecision> => {
          if (d === undefined) return nextCalled ? nextResult! : next();
          if (!isPreDecision(d)) throw noteFailure(l.name, new TypeError(`returned an invalid decision ${describeDecision(d)}`));
          return d;
        };
        let r: SyncOrAsync<PreExecuteDecision | void>;
        try {
          r = l.fn(p.view, next);
        } catch (e) {
          answered(i);
          throw noteFailure(l.name, e);
        }
        if (isPromise(r)) {
          // Promise.resolve: a bare thenable becomes a real promise (the machine waits on those only).
          const decided = Promise.resolve(r).then(
            (d) => (answered(i), settle(d)),
            (e) => {
              answered(i);
              throw noteFailure(l.name, e);
            },
          );
          decided.catch(() => {}); // recorded by noteFailure; whoever awaits it still sees the rejection
          started.push(decided);
          return decided;
        }
        answered(i);
        return settle(r);
      };
      let result: SyncOrAsync<PreExecuteDecision>;
      try {
        result = dispatch(0);
      } catch {
        return failed();
      }
      if (!isPromise(result) && started.length === 0) return failure ? failed() : result;
      const allSettled = async (): Promise<void> => {
        // A listener may start another one late (after an await): wait until none is left.
        for (let seen = 0; seen < started.length; ) {
          const batch = started.slice(seen);
          seen = started.length;
          await Promise.allSettled(batch);
        }
      };
      return (async (): Promise<PreExecuteOutcome> => {
        let d: PreExecuteDecision;
        try {
          d = await result;
        } catch {
          return failed();
        }
        await allSettled();
        return failure ? failed() : d;
      })();
    },

    isApprovalRemembered: (p) => remembered.has(approvalKey(p)),
    rememberApproval: (p) => void remembered.add(approvalKey(p)),
    async requestApproval(p, reason, signal) {
      if (!deps.approval) return 'denied';
      let answer: unknown;
      try {
        answer = await deps.approval.request({ callId: p.view.callId, toolName: p.view.toolName, args: p.view.args, reason }, signal);
      } catch (e) {
        // The call is denied either way; the log says why when it was not a withdrawal.
        if (!signal.aborted) {
          log.append({ type: 'warning', ...where(p.view), code: 'APPROVAL_FAILED', message: `the approval service failed: ${message(e)}` });
        }
        throw e;
      }
      // Anything but the three answers denies (SPEC §8.3), and the log only ever holds those three.
      if (ApprovalAnswerSchema.safeParse(answer).success) return answer as ApprovalAnswer;
      log.append({
        type: 'warning',
        ...where(p.view),
        code: 'APPROVAL_ANSWER_INVALID',
        message: `the approval service answered ${typeof answer === 'string' ? JSON.stringify(answer.slice(0, 100)) : typeof answer}; treated as denied`,
      });
      return 'denied';
    },

    guard(p: PreparedCall): GuardOutcome {
      for (const g of guards.list()) {
        let r: unknown;
        try {
          r = g.fn(p.view);
        } catch (e) {
          return { kind: 'failed', hook: 'tools/guard', listener: g.name, message: message(e) };
        }
        if (typeof r === 'string') return { kind: 'deny', reason: r, listener: g.name };
        if (r !== undefined) {
          return { kind: 'failed', hook: 'tools/guard', listener: g.name, message: `returned ${isPromise(r) ? 'a promise' : typeof r}; a guard returns a string (deny) or undefined` };
        }
      }
      return undefined;
    },

    execute(p: PreparedCall, signal: AbortSignal): Promise<ExecOutcome> {
      const wrappers = hooks.list('tools/execute');
      const base = execContext(p.view, signal);
      if (wrappers.length === 0) return runBody(p, base, signal).then(wellFormedOutcome);
      const run = (i: number, exec: ExecContext): Promise<ExecOutcome> => {
        if (i >= wrappers.length) return runBody(p, exec, signal);
        const w = wrappers[i]!;
        const next = (over?: Partial<Pick<ExecContext, 'signal' | 'attempt'>>) => {
          // A replaced signal is fused with the one this wrapper got, so every outer signal (the
          // caller's, an outer timeout's) still reaches the body through any number of wrappers.
          const replaced = over?.signal && over.signal !== exec.signal ? over.signal : undefined;
          const fused = replaced ? anySignal([exec.signal, replaced]) : undefined;
          const outcome = run(i + 1, { ...exec, attempt: over?.attempt ?? exec.attempt, signal: fused ?? exec.signal });
          if (fused) void outcome.then(() => fused.clear());
          return outcome;
        };
        const wrapperFailed = (e: unknown): ExecOutcome => {
          log.append({ type: 'hook/failed', ...where(p.view), hook: 'tools/execute', listener: w.name, message: message(e), failed: 'closed' });
          return { ok: false, error: info(ErrorCode.HOOK_FAILED, `tools/execute wrapper "${w.name}" failed: ${message(e)}`) };
        };
        try {
          return Promise.resolve(w.fn(p.view, exec, next)).then(
            (o) => (o && typeof o === 'object' && typeof o.ok === 'boolean' ? o : wrapperFailed(new TypeError('returned no outcome'))),
            wrapperFailed,
          );
        } catch (e) {
          return Promise.resolve(wrapperFailed(e));
        }
      };
      return run(0, base).then(wellFormedOutcome);
    },

    draftFromValue(p: PreparedCall, returned: unknown): Settlement {
      const tool = toolOf(p);
      // A body that already split its result (see toolOutput.ts) brings its own content and parts.
      const own = isToolOutput(returned) ? returned : undefined;
      const value = own ? own.value : returned;
      const checked = validateOutput(tool, value);
      if (!checked.ok) return { ok: false, error: info(ErrorCode.INVALID_OUTPUT, checked.message) };
      let content: string;
      try {
        content = own ? own.content : contentOf(tool, checked.value);
      } catch (e) {
        return { ok: false, error: info(ErrorCode.TOOL_FAILED, `toContent of "${tool.name}" failed: ${message(e)}`) };
      }
      try {
        const parts = own?.parts ? { parts: own.parts } : {};
        return { ok: true, draft: { value: checked.value, content, metadata: metadataOf(tool, checked.value), ...parts } };
      } catch (e) {
        return { ok: false, error: info(ErrorCode.TOOL_FAILED, `toMetadata of "${tool.name}" failed: ${message(e)}`) };
      }
    },

    postExecute(p: PreparedCall, first: ResultDraft, trace: StageTrace): SyncOrAsync<PostExecuteOutcome> {
      const listeners = hooks.list('tools/post-execute');
      const tool = toolOf(p);
      // Drafts are frozen: a listener rewrites through its decision (re-validated), never in place.
      let draft = deepFreeze(first);
      const apply = (name: string, d: PostExecuteDecision | void): PostExecuteOutcome | undefined => {
        if (d === undefined) return undefined;
        if (!isPostDecision(d)) {
          return { kind: 'failed', hook: 'tools/post-execute', listener: name, message: `returned an invalid decision ${describeDecision(d)}` };
        }
        if (d.kind === 'block') return { kind: 'blocked', feedback: d.feedback, listener: name };
        let { value, content, metadata, parts } = draft;
        if ('value' in d && d.value !== undefined) {
          const checked = validateOutput(tool, d.value);
          if (!checked.ok) return { kind: 'invalid-output', message: `post-execute listener "${name}" replaced the value: ${checked.message}` };
          value = checked.value;
          content = contentOf(tool, value);
          parts = undefined; // they came with the replaced value
        }
        if (d.content !== undefined) content = d.content;
        if (d.metadata) metadata = { ...metadata, ...d.metadata };
        draft = deepFreeze({ value, content, metadata, ...(parts ? { parts } : {}) });
        return undefined;
      };
      const step = (i: number): SyncOrAsync<PostExecuteOutcome> => {
        for (; i < listeners.length; i++) {
          const l = listeners[i]!;
          trace.listener = l.name;
          let r: SyncOrAsync<PostExecuteDecision | void>;
          try {
            if (l.appliesTo && !l.appliesTo(draft, p.view)) continue;
            r = l.fn(draft, p.view);
          } catch (e) {
            return { kind: 'failed', hook: 'tools/post-execute', listener: l.name, message: message(e) };
          }
          if (isPromise(r)) {
            const at = i;
            return Promise.resolve(r).then(
              (d) => {
                try {
                  return apply(l.name, d) ?? step(at + 1);
                } catch (e) {
                  return { kind: 'failed', hook: 'tools/post-execute', listener: l.name, message: message(e) } as const;
                }
              },
              (e) => ({ kind: 'failed', hook: 'tools/post-execute', listener: l.name, message: message(e) }) as const,
            );
          }
          let stop: PostExecuteOutcome | undefined;
          try {
            stop = apply(l.name, r);
          } catch (e) {
            stop = { kind: 'failed', hook: 'tools/post-execute', listener: l.name, message: message(e) };
          }
          if (stop) return stop;
        }
        return { kind: 'accepted', draft };
      };
      return step(0);
    },

    finalize(request: ToolCallRequest, p: PreparedCall | undefined, settlement: Settlement, marks: StageMarks | undefined): ToolResult {
      const toolName = p?.view.toolName ?? request.toolName;
      let result: ToolResult;
      if (settlement.ok) {
        let content = settlement.draft.content;
        const finalizeContent = p && toolOf(p).finalizeContent;
        let finalizeError: string | undefined;
        if (finalizeContent) {
          try {
            const fixed = finalizeContent(content);
            if (typeof fixed !== 'string') throw new TypeError(`returned ${typeof fixed}, not a string`);
            content = fixed;
          } catch (e) {
            finalizeError = message(e);
          }
        }
        if (finalizeError !== undefined) {
          log.append({ type: 'hook/failed', turnId: p?.view.turnId, stepIndex: p?.view.stepIndex, callId: request.callId, hook: 'finalizeContent', listener: `${toolName}.finalizeContent`, message: finalizeError, failed: 'closed' });
          // The content it was fixing may have needed the fix: it does not reach the model.
          result = {
            callId: request.callId,
            toolName,
            isError: true,
            error: info(ErrorCode.HOOK_FAILED, `finalizeContent of "${toolName}" failed: ${finalizeError}`),
            content: `HOOK_FAILED: finalizeContent of "${toolName}" failed`,
            metadata: { ...settlement.draft.metadata },
          };
        } else {
          result = { callId: request.callId, toolName, isError: false, content, value: settlement.draft.value, metadata: { ...settlement.draft.metadata } };
          if (settlement.draft.parts?.length) result.parts = [...settlement.draft.parts];
        }
      } else {
        result = {
          callId: request.callId,
          toolName,
          isError: true,
          error: settlement.error,
          content: settlement.content ?? `${settlement.error.code}: ${settlement.error.message}`,
          metadata: { ...settlement.metadata },
        };
      }
      if (marks) result.metadata.durationsMs = durations(marks, clock.now());
      const frozen = deepFreeze(result);
      for (const o of hooks.list('tools/result')) {
        const failedOpen = (e: unknown) =>
          log.append({ type: 'hook/failed', turnId: p?.view.turnId, stepIndex: p?.view.stepIndex, callId: request.callId, hook: 'tools/result', listener: o.name, message: message(e), failed: 'open' });
        try {
          const r: unknown = o.fn(frozen);
          // An async observer cannot hold the flow up, but its failure is still recorded, not lost.
          if (isPromise(r)) Promise.resolve(r).then(undefined, failedOpen);
        } catch (e) {
          failedOpen(e);
        }
      }
      return frozen;
    },

    record(event: NewLogEvent) {
      log.append(event);
    },

    isMetered: () => hooks.list('tools/execute').some((w) => isMetricsWrapper(w.fn)),
  };
}

const STAGES = ['validating', 'preExecute', 'awaitingApproval', 'guard', 'executing', 'postExecute', 'finalizing'] as const;

/** Per-stage durations from entry marks: each stage lasts until the next one that was entered. */
function durations(marks: StageMarks, end: number): Record<string, number> {
  const entered = STAGES.filter((s) => marks[s] !== undefined);
  const out: Record<string, number> = {};
  entered.forEach((s, i) => {
    const next = i + 1 < entered.length ? marks[entered[i + 1]!]! : end;
    out[s] = next - marks[s]!;
  });
  out.total = end - (marks.validating ?? end);
  return out;
}
