/**
 * Stages 3 and 4: the `tools/execute` around-wrappers and the tool body (SPEC §2.3–2.4). A wrapper
 * may replace the signal; every replaced signal is fused with the one it replaced, so a caller
 * abort always reaches the body. Never rejects: every failure is an outcome.
 *
 * No tool body starts before its `tool/call` is durable (SPEC §1: the call is in the log before it
 * can run; with a log on disk, "in the log" means on disk). The scheduler (and `runCall`) append
 * `tool/call` before the call's actor exists; this stage first waits until the log is durable up
 * to its last event, which includes that `tool/call`. Only then do the `tools/execute` wrappers and
 * the body run. A crash after a body started thus always leaves its `tool/call` on disk, and
 * resuming closes it as `INTERRUPTED`. Calls reaching this stage together share one write+fsync
 * (the sink's group commit). A log that cannot be made durable runs no body: the call settles
 * `ABORTED_BEFORE_DISPATCH`. A log without `whenDurable` (the in-memory log) is durable at once:
 * the body runs without a wait.
 */
import { anySignal } from 'any-signal';
import type { CallView, ExecOutcome, PreparedCall } from '../../../machines/callStages.js';
import { describeThrown, ErrorCode, ErrorCodeSchema, thrownMessage, type ToolErrorInfo } from '../../protocol/index.js';
import type { ExecContext } from '../defineTool.js';
import { errorInfo, toErrorInfo, toolErrorInfo, type ToolError } from '../toolError.js';
import { toolOf } from './prepare.js';
import { createProgressChannel, type ProgressChannel } from './progress.js';
import { placeOf, type StageDeps } from './stageDeps.js';

type ExecDeps = Pick<StageDeps, 'hooks' | 'log' | 'clock' | 'context' | 'progressIntervalMs'>;

/**
 * Results carry only the stable codes of SPEC §6 (the log schema and every layer that routes on
 * `code` rely on it): a failure with any other code, or none, becomes TOOL_FAILED, keeping its text.
 */
function wellFormedOutcome(o: ExecOutcome): ExecOutcome {
  if (o.ok) return o;
  const extra = failureDetails(o);
  // A wrapper's failure is user data: each field is read once, and reading one that throws is described.
  const read = (key: keyof ToolErrorInfo): unknown => {
    try {
      return (o.error as Partial<ToolErrorInfo> | undefined)?.[key];
    } catch (e) {
      return `(unreadable ${key}: ${describeThrown(e)})`;
    }
  };
  const code = read('code');
  const name = read('name');
  const msg = read('message');
  const text = typeof msg === 'string' ? msg : msg === undefined ? 'the tool failed' : describeThrown(msg);
  if (ErrorCodeSchema.safeParse(code).success) {
    if (typeof name === 'string' && typeof msg === 'string') return { ok: false, error: { name, code: code as ErrorCode, message: msg }, ...extra };
    return { ok: false, error: errorInfo(code as ErrorCode, text), ...extra };
  }
  return { ok: false, error: errorInfo(ErrorCode.TOOL_FAILED, `${text} (unknown error code ${JSON.stringify(describeThrown(code))})`), ...extra };
}

/** The content and metadata a failure carries, kept only when well-formed (a string, a plain object); read once, never throwing. */
function failureDetails(d: unknown): { content?: string; metadata?: Record<string, unknown> } {
  const out: { content?: string; metadata?: Record<string, unknown> } = {};
  try {
    const { content, metadata } = (d ?? {}) as { content?: unknown; metadata?: unknown };
    if (typeof content === 'string') out.content = content;
    // (null passes as an object here and spreads to nothing: no metadata either way.)
    if (typeof metadata === 'object' && !Array.isArray(metadata)) out.metadata = { ...(metadata as Record<string, unknown>) };
  } catch {
    // Hostile details (a throwing getter, a revoked Proxy) are dropped: the error itself stays.
  }
  return out;
}

/** A wrapper's return value as an outcome, read once (a getter may answer differently twice); undefined if it is none. */
function outcomeOf(o: unknown): ExecOutcome | undefined {
  // `?.`: null and undefined are no outcome; a primitive has no `ok`.
  const ok = (o as { ok?: unknown } | null | undefined)?.ok;
  if (ok === true) return { ok: true, value: (o as { value?: unknown }).value };
  if (ok === false) {
    const f = o as { error?: unknown; content?: unknown; metadata?: unknown };
    return wellFormedOutcome({ ok: false, error: f.error as ToolErrorInfo, ...failureDetails({ content: f.content, metadata: f.metadata }) });
  }
  return undefined;
}

function abortInfo(signal: AbortSignal): ToolErrorInfo {
  const reason = signal.reason as unknown;
  // An abort always has a reason (AbortController gives an AbortError when the caller gave none).
  return toolErrorInfo(reason) ?? errorInfo(ErrorCode.ABORTED, `aborted: ${thrownMessage(reason)}`);
}

/** The call's progress channel, made on the first update (most calls report none). */
function lazyProgress(deps: ExecDeps, view: CallView, signal: AbortSignal): { report: ExecContext['progress']; close: () => void } {
  let channel: ProgressChannel | undefined;
  let closed = false;
  const close = () => {
    closed = true;
    channel?.close();
  };
  return {
    report: (update) => {
      if (closed) return;
      if (!channel) {
        if (signal.aborted) return close();
        channel = createProgressChannel({
          clock: deps.clock,
          intervalMs: deps.progressIntervalMs,
          place: { ...placeOf(view), toolName: view.toolName },
          append: (event) => void deps.log.append(event),
        });
        // After an abort the call settles without waiting for the body: what it reported is logged now.
        // (Kept until the call's signal goes: `close` is idempotent.)
        signal.addEventListener('abort', close);
      }
      channel.report(update);
    },
    close,
  };
}

function execContext(deps: ExecDeps, view: CallView, signal: AbortSignal, progress: ExecContext['progress']): ExecContext {
  return {
    signal,
    callId: view.callId,
    clock: deps.clock,
    attempt: 1,
    context: deps.context,
    warn: (code, text, data) => deps.log.append({ type: 'warning', ...placeOf(view), code, message: text, data }),
    progress,
  };
}

/** What the body did, with `exec.signal` the one it runs under: its value, or its failure as an outcome. */
async function bodyOutcome(p: PreparedCall, exec: ExecContext): Promise<ExecOutcome> {
  const { signal } = exec;
  try {
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: the call settled on the abort and ignores this outcome; what matters is that the body does not start
    if (signal.aborted) return { ok: false, error: abortInfo(signal) };
    const value = await toolOf(p).execute(p.view.args, exec);
    return { ok: true, value };
  } catch (e) {
    const own = toolErrorInfo(e);
    if (own) return { ok: false, error: own, ...failureDetails((e as ToolError).details) };
    if (signal.aborted) return { ok: false, error: abortInfo(signal) };
    return { ok: false, error: toErrorInfo(e, ErrorCode.TOOL_FAILED) };
  }
}

const notDurable = (e: unknown): ExecOutcome => ({
  ok: false,
  error: errorInfo(
    ErrorCode.ABORTED_BEFORE_DISPATCH,
    // What the log port failed with is the port's (a user's sink): read safely, made visible.
    `the session log could not make this call's tool/call durable, so it did not run: ${thrownMessage(e)}`,
  ),
});

/** The execute stage: once everything the log holds is durable, the wrappers around the body. */
export function runExecute(deps: ExecDeps, p: PreparedCall, signal: AbortSignal): Promise<ExecOutcome> {
  const { log } = deps;
  if (!log.whenDurable) return runWrapped(deps, p, signal);
  let wait: Promise<void> | undefined;
  try {
    wait = log.whenDurable(log.lastSeq);
  } catch (e) {
    return Promise.resolve(notDurable(e));
  }
  // After the wait the body's stage sees an abort that came meanwhile (ABORTED, no body).
  return wait ? wait.then(() => runWrapped(deps, p, signal), notDurable) : runWrapped(deps, p, signal);
}

/** The `tools/execute` wrappers in order, then the body. */
function runWrapped(deps: ExecDeps, p: PreparedCall, signal: AbortSignal): Promise<ExecOutcome> {
  const wrappers = deps.hooks.list('tools/execute');
  const progress = lazyProgress(deps, p.view, signal);
  const base = execContext(deps, p.view, signal, progress.report);
  // The last progress update is logged before the outcome reaches the call (and so before its result).
  const settled = (o: ExecOutcome): ExecOutcome => {
    progress.close();
    return wellFormedOutcome(o);
  };
  // Stryker disable next-line ConditionalExpression: the fast path; run(0) with no wrappers runs the same body
  if (wrappers.length === 0) return bodyOutcome(p, base).then(settled);
  const run = (i: number, exec: ExecContext): Promise<ExecOutcome> => {
    // The body runs under the signal the wrappers handed on: each replaced one was fused with the
    // one before it (below), so the caller's abort reaches the body through any number of wrappers.
    if (i >= wrappers.length) return bodyOutcome(p, exec);
    const w = wrappers[i]!;
    const next = (over?: Partial<Pick<ExecContext, 'signal' | 'attempt'>>) => {
      // A replaced signal is fused with the one this wrapper got, so every outer signal (the
      // caller's, an outer timeout's) still reaches the body through any number of wrappers.
      // Stryker disable next-line ConditionalExpression: fusing a signal with itself gives the same signal's aborts
      const replaced = over?.signal && over.signal !== exec.signal ? over.signal : undefined;
      const fused = replaced ? anySignal([exec.signal, replaced]) : undefined;
      const outcome = run(i + 1, { ...exec, attempt: over?.attempt ?? exec.attempt, signal: fused ?? exec.signal });
      // Stryker disable next-line ConditionalExpression,ArrowFunction: clear() only detaches the fused signal's listeners early (they go with the call's signals)
      if (fused) void outcome.then(() => fused.clear());
      return outcome;
    };
    const wrapperFailed = (e: unknown): ExecOutcome => {
      const text = describeThrown(e);
      deps.log.append({ type: 'hook/failed', ...placeOf(p.view), hook: 'tools/execute', listener: w.name, message: text, failed: 'closed' });
      return { ok: false, error: errorInfo(ErrorCode.HOOK_FAILED, `tools/execute wrapper "${w.name}" failed: ${text}`) };
    };
    try {
      return Promise.resolve(w.fn(p.view, exec, next)).then((o) => {
        let outcome: ExecOutcome | undefined;
        try {
          outcome = outcomeOf(o);
        } catch (e) {
          return wrapperFailed(e);
        }
        return outcome ?? wrapperFailed(new TypeError('returned no outcome'));
      }, wrapperFailed);
    } catch (e) {
      return Promise.resolve(wrapperFailed(e));
    }
  };
  return run(0, base).then(settled);
}

/** The per-call deadline: `expired` gets the TIMEOUT error unless the returned disarm comes first. */
export function armCallDeadline(deps: Pick<StageDeps, 'clock' | 'limits'>, expired: (error: ToolErrorInfo) => void): () => void {
  const ms = deps.limits.callTimeoutMs;
  const handle = deps.clock.setTimeout(() => expired(errorInfo(ErrorCode.TIMEOUT, `the call did not settle within ${ms} ms of dispatch (limits.callTimeoutMs)`)), ms);
  return () => deps.clock.clearTimeout(handle);
}
