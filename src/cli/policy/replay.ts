/**
 * `dsh policy replay`: what the current policies would have decided about every call recorded in
 * session logs (issue 26 item 3). Each logged `tool/call` goes through a policy checker
 * (policyCheck.ts: the pipeline with stand-in tools, so no tool body runs) with the same policies
 * `dsh run` installs; the decision is compared with what the log says happened then.
 *
 * Then (from the log): `deny` (POLICY_DENIED, GUARD_DENIED, or a pre-execute/guard listener that
 * failed closed), `ask` (an approval was requested; `ran` says whether the person said yes), else
 * `allow`. A call that never reached the policies (unknown tool, invalid arguments, a truncated or
 * duplicate call) or whose log ends before its result is not compared.
 */
import type { DecisionProvenance, LogEvent, ToolResult } from '../../protocol/index.js';
import type { PolicyChecker, PolicyOutcome, PolicyVerdict } from '../../runtime/policies/policyCheck.js';

export type LoggedOutcome = 'allow' | 'ask' | 'deny';

/** One recorded call and what happened to it then. */
export interface RecordedCall {
  readonly session: string;
  readonly turnId: string | undefined;
  readonly callId: string;
  readonly toolName: string;
  readonly input: unknown;
  readonly then: LoggedOutcome;
  /** Its body ran then (allowed, or asked and approved). */
  readonly ran: boolean;
  readonly thenDecision?: DecisionProvenance;
}

/** A call whose decision differs now. */
export interface ReplayChange extends RecordedCall {
  readonly now: PolicyOutcome;
  readonly nowDecision?: DecisionProvenance;
  readonly nowReason?: string;
}

/**
 * The changes a replay can fail on (`--fail-on`): a call whose body ran then that would now be
 * denied; one that was denied then (by a policy or a person) that would now run without a
 * question; any change at all.
 */
export const FAIL_ON = ['ran-now-denied', 'denied-now-runs', 'any-change'] as const;
export type FailOn = (typeof FAIL_ON)[number];

export interface ReplayReport {
  readonly sessions: number;
  readonly calls: number;
  /** Calls not compared: they never reached the policies, or have no result. */
  readonly skipped: number;
  readonly unchanged: number;
  readonly changes: readonly ReplayChange[];
  /** `then → now` → how many calls. */
  readonly transitions: Readonly<Record<string, number>>;
}

/** Codes of calls that never reached the policies. */
const BEFORE_POLICIES = new Set(['UNKNOWN_TOOL', 'INVALID_ARGS', 'TRUNCATED_CALL', 'DUPLICATE_CALL_ID']);

/** The calls of one session's events, with what happened to each then. */
export function recordedCalls(session: string, events: readonly LogEvent[]): { calls: RecordedCall[]; skipped: number } {
  const key = (turnId: string | undefined, callId: string) => `${turnId ?? ''}\u0000${callId}`;
  const asked = new Set<string>();
  const results = new Map<string, ToolResult>();
  for (const e of events) {
    if (e.type === 'tool/approval-request') asked.add(key(e.turnId, e.callId));
    else if (e.type === 'tool/result') results.set(key(e.turnId, e.callId), e.result);
  }
  const calls: RecordedCall[] = [];
  let skipped = 0;
  for (const e of events) {
    if (e.type !== 'tool/call') continue;
    const k = key(e.turnId, e.callId);
    const r = results.get(k);
    if (!r || (r.isError && BEFORE_POLICIES.has(r.error.code))) {
      skipped++;
      continue;
    }
    const base = { session, turnId: e.turnId, callId: e.callId, toolName: e.toolName, input: e.input, ...(r.decision ? { thenDecision: r.decision } : {}) };
    const code = r.isError ? r.error.code : undefined;
    const d = r.decision;
    const denied = code === 'POLICY_DENIED' || code === 'GUARD_DENIED' || (code === 'HOOK_FAILED' && (d?.stage === 'pre-execute' || d?.stage === 'guard'));
    if (denied) calls.push({ ...base, then: 'deny', ran: false });
    else if (asked.has(k)) calls.push({ ...base, then: 'ask', ran: code !== 'APPROVAL_DENIED' && code !== 'ABORTED_BEFORE_DISPATCH' });
    else calls.push({ ...base, then: 'allow', ran: code !== 'ABORTED_BEFORE_DISPATCH' });
  }
  return { calls, skipped };
}

/** Replays `calls` through `checker`; the report lists every call decided otherwise now. */
export async function replayCalls(calls: readonly RecordedCall[], checker: PolicyChecker, sessions: number, skippedBefore = 0): Promise<ReplayReport> {
  const changes: ReplayChange[] = [];
  const transitions: Record<string, number> = {};
  let unchanged = 0;
  let skipped = skippedBefore;
  for (const c of calls) {
    const v: PolicyVerdict = await checker.check({ toolName: c.toolName, input: c.input });
    if (v.outcome === 'invalid') {
      skipped++;
      continue;
    }
    if (v.outcome === c.then) {
      unchanged++;
      continue;
    }
    const t = `${c.then} → ${v.outcome}`;
    transitions[t] = (transitions[t] ?? 0) + 1;
    changes.push({ ...c, now: v.outcome, ...(v.decision ? { nowDecision: v.decision } : {}), ...(v.reason !== undefined ? { nowReason: v.reason } : {}) });
  }
  return { sessions, calls: calls.length, skipped, unchanged, changes, transitions };
}

/** Whether a change is one `failOn` fails on. */
export function failsOn(change: ReplayChange, failOn: readonly FailOn[]): boolean {
  return failOn.some((f) =>
    f === 'any-change' ? true : f === 'ran-now-denied' ? change.ran && change.now === 'deny' : !change.ran && change.now === 'allow',
  );
}
