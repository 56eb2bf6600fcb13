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
import { describeThrown, type DecisionProvenance, type LogEvent } from '../../protocol/index.js';
import type { PolicyChecker, PolicyOutcome, PolicyVerdict } from '../../runtime/policies/policyCheck.js';

/** What the policies decided about a recorded call then. */
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
  /** What the call returned then (the model's text of its result), replayed to post-execute listeners. */
  readonly content?: string;
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
/** One kind of change a replay can fail on (see `FAIL_ON`). */
export type FailOn = (typeof FAIL_ON)[number];

/** What replaying recorded sessions through the current policies found: counts, and each call whose decision changed. */
export interface ReplayReport {
  readonly sessions: number;
  readonly calls: number;
  /** Calls not compared: they never reached the policies, or have no result. */
  readonly skipped: number;
  readonly unchanged: number;
  /** The first MAX_LISTED_CHANGES changes. */
  readonly changes: readonly ReplayChange[];
  /** Changes past those listed (counted in `transitions`, not listed). */
  readonly omitted: number;
  /** Changes, listed or not, that `--fail-on` fails on. */
  readonly failing: number;
  /** Calls the checker could not check, by session and call id. */
  readonly problems: readonly string[];
  /** `then → now` → how many calls. */
  readonly transitions: Readonly<Record<string, number>>;
}

/** Codes of calls that never reached the policies. */
const BEFORE_POLICIES = new Set(['UNKNOWN_TOOL', 'INVALID_ARGS', 'TRUNCATED_CALL', 'DUPLICATE_CALL_ID']);

/** Calls awaiting their result that a replay holds at most (a forged log may never give results): older ones are dropped, counted as not compared. */
export const MAX_PENDING_CALLS = 10_000;
/** Changes a replay keeps to list (the rest are counted, in `transitions` and `omitted`). */
export const MAX_LISTED_CHANGES = 1_000;

/**
 * Reads one session's events as they stream by and hands on each call once its result is seen,
 * with what happened to it then. Holds only the calls still awaiting a result (at most
 * MAX_PENDING_CALLS), so a log of any length is read in bounded memory. `end()` counts the
 * calls left without a result.
 */
export function recordedCallStream(session: string, emit: (call: RecordedCall) => void): { onEvent(e: LogEvent): void; end(): number; skipped(): number } {
  // Stryker disable next-line StringLiteral: any separator no id holds keeps a turn's ids apart (test: "t1"+"c" is not "t"+"1c")
  const key = (turnId: string | undefined, callId: string) => `${turnId ?? ''}\u0000${callId}`;
  const pending = new Map<string, { turnId: string | undefined; callId: string; toolName: string; input: unknown; asked: boolean }>();
  let skipped = 0;
  return {
    onEvent(e) {
      if (e.type === 'tool/call') {
        const k = key(e.turnId, e.callId);
        if (pending.has(k)) pending.delete(k);
        else if (pending.size >= MAX_PENDING_CALLS) {
          pending.delete(pending.keys().next().value!);
          skipped++;
        }
        pending.set(k, { turnId: e.turnId, callId: e.callId, toolName: e.toolName, input: e.input, asked: false });
      } else if (e.type === 'tool/approval-request') {
        const c = pending.get(key(e.turnId, e.callId));
        if (c) c.asked = true;
      } else if (e.type === 'tool/result') {
        const k = key(e.turnId, e.callId);
        const c = pending.get(k);
        if (!c) return;
        pending.delete(k);
        const r = e.result;
        if (r.isError && BEFORE_POLICIES.has(r.error.code)) {
          skipped++;
          return;
        }
        const base = { session, turnId: c.turnId, callId: c.callId, toolName: c.toolName, input: c.input, ...(r.decision ? { thenDecision: r.decision } : {}), ...(r.isError ? {} : { content: r.content }) };
        const code = r.isError ? r.error.code : undefined;
        const d = r.decision;
        const denied = code === 'POLICY_DENIED' || code === 'GUARD_DENIED' || (code === 'HOOK_FAILED' && (d?.stage === 'pre-execute' || d?.stage === 'guard'));
        if (denied) emit({ ...base, then: 'deny', ran: false });
        else if (c.asked) emit({ ...base, then: 'ask', ran: code !== 'APPROVAL_DENIED' && code !== 'ABORTED_BEFORE_DISPATCH' });
        else emit({ ...base, then: 'allow', ran: code !== 'ABORTED_BEFORE_DISPATCH' });
      }
    },
    end() {
      skipped += pending.size;
      pending.clear();
      return skipped;
    },
    skipped: () => skipped,
  };
}

/**
 * A replay's tally: each call is checked as it comes (`check`), and only the counts and the first
 * MAX_LISTED_CHANGES changes are kept. A call the checker cannot even check (it throws) is not
 * compared, and named in `problems`.
 */
export function createReplayTally(checker: PolicyChecker, failOn: readonly FailOn[]) {
  const changes: ReplayChange[] = [];
  const transitions: Record<string, number> = {};
  const problems: string[] = [];
  let calls = 0;
  let unchanged = 0;
  let skipped = 0;
  let failing = 0;
  let changed = 0;
  return {
    async check(c: RecordedCall): Promise<void> {
      calls++;
      let v: PolicyVerdict;
      try {
        v = await checker.check({ toolName: c.toolName, input: c.input, ...(c.content !== undefined ? { content: c.content } : {}) });
      } catch (e) {
        skipped++;
        if (problems.length < MAX_LISTED_CHANGES) problems.push(`${c.session} ${c.callId}: not compared: ${describeThrown(e)}`);
        return;
      }
      if (v.outcome === 'invalid') {
        skipped++;
        return;
      }
      if (v.outcome === c.then) {
        unchanged++;
        return;
      }
      const t = `${c.then} → ${v.outcome}`;
      transitions[t] = (transitions[t] ?? 0) + 1;
      changed++;
      // The recorded content went to the check; a report names the call, it does not repeat its result.
      const { content: _content, ...call } = c;
      const change: ReplayChange = { ...call, now: v.outcome, ...(v.decision ? { nowDecision: v.decision } : {}), ...(v.reason !== undefined ? { nowReason: v.reason } : {}) };
      if (failsOn(change, failOn)) failing++;
      if (changes.length < MAX_LISTED_CHANGES) changes.push(change);
    },
    /** Calls not compared because they never reached the policies (counted by the stream). */
    skip(n: number): void {
      skipped += n;
    },
    report(sessions: number): ReplayReport {
      return { sessions, calls, skipped, unchanged, changes, omitted: changed - changes.length, failing, transitions, problems };
    },
  };
}

/** Whether a change is one `failOn` fails on. */
export function failsOn(change: ReplayChange, failOn: readonly FailOn[]): boolean {
  return failOn.some((f) =>
    f === 'any-change' ? true : f === 'ran-now-denied' ? change.ran && change.now === 'deny' : !change.ran && change.now === 'allow',
  );
}
