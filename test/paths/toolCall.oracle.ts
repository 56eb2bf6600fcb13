/**
 * What SPEC says must happen to one tool call, given what happened along a path: the call's
 * setup (which listeners exist and what they answer right away: the path's configuration) and,
 * in order, every asynchronous thing the path fed it (a listener's late decision, the approval
 * service's answer, the body settling, the caller's cancel, a deadline passing).
 *
 * Written from SPEC §2, §3, §5, §6 and §8 (and `seed/tool-pipeline.zh.txt` where SPEC is unclear),
 * never from `machines/toolCall.ts`: it does not read the machine, its states or its transitions,
 * only the path's events, by their meaning. The path tests compare the runtime against it as well
 * as against the machine's own replay, so a wrong mapping inside the machine (a deny giving the
 * wrong code, a cancel before dispatch giving `ABORTED`) fails the paths that reach it.
 */
import type { AnyEventObject } from 'xstate';
import type { ToolCallConfig } from './toolCall.model.js';

/** Something that happened to the call, as the oracle understands a path's event. */
export type Happening =
  | { readonly kind: 'pre-decided'; readonly decision: 'allow' | 'deny' | 'ask' | 'failed' }
  | { readonly kind: 'approval'; readonly answer: string }
  | { readonly kind: 'body-settled'; readonly ok: boolean }
  | { readonly kind: 'post-decided'; readonly decision: 'accepted' | 'blocked' | 'invalid-output' | 'failed' }
  | { readonly kind: 'cancel' }
  /** Fake time moved to the next deadline: of whatever the call is waiting for. */
  | { readonly kind: 'deadline' }
  /** An event the oracle cannot read: the path fails, naming it (never a guess). */
  | { readonly kind: 'unknown'; readonly type: string };

/** Reads a path's event as a happening. */
export function happeningOf(e: AnyEventObject): Happening {
  if (e.type === 'PRE.DECIDED') return { kind: 'pre-decided', decision: e.outcome.kind };
  if (e.type === 'APPROVAL.ANSWERED') return { kind: 'approval', answer: e.answer };
  if (e.type === 'EXECUTED') return { kind: 'body-settled', ok: e.settlement.ok === true };
  if (e.type === 'POST.DONE') return { kind: 'post-decided', decision: e.outcome.kind };
  if (e.type === 'CANCEL') return { kind: 'cancel' };
  if (e.type.startsWith('xstate.after.')) return { kind: 'deadline' };
  return { kind: 'unknown', type: e.type };
}

/**
 * The one point where SPEC was once read differently by the runtime (fixed: the machine now settles
 * such a body ABORTED), kept as a switch so a mutation back to `'kept'` is easy to judge.
 *
 * SPEC §3: on a cancel, started calls "end as `ABORTED` unless they had already produced a result";
 * §8.9: "A body that finished before the cancel keeps its result"; the source (§失败处理): "已开始的
 * 调用结算为 ABORTED". So a body that returns a value *after* the cancel (it ignored its signal,
 * and returned within the grace period) ends `ABORTED` (`'aborted'`), not with its value (`'kept'`).
 */
export interface OracleRules {
  readonly bodyValueAfterCancel: 'aborted' | 'kept';
}

export const SPEC_RULES: OracleRules = { bodyValueAfterCancel: 'aborted' };

/** What the scenario's listeners say (their names and texts, `toolCall.scenario.ts`). */
export const scenarioTexts = {
  preListener: 'gate',
  denyReason: 'not in plan mode',
  guardListener: 'fridays',
  guardReason: 'never on Fridays',
  postListener: 'review',
  blockFeedback: 'contains a secret',
  bodyValue: 'done',
} as const;

export interface ToolCallVerdict {
  /** The result's error code, or `ok`. */
  readonly code: string;
  /** SPEC section that decided it. */
  readonly because: string;
  /** The body was dispatched (SPEC §8.9: "started" means dispatched to the tool body). */
  readonly bodyRuns: boolean;
  /** The approval service was asked (§2.1 `ask`; §8.3: not again after `allowed-always`). */
  readonly approvalAsked: boolean;
  /** The post-execute listener saw the body's value (§2.5). */
  readonly postListenerRuns: boolean;
  /** Listeners whose failure is logged (`hook/failed`, §5 "every listener failure is recorded", §8.4 naming it). */
  readonly failedListeners: readonly string[];
  /** Text the result's content must contain (§8.4), or must not (§8.5). */
  readonly contentIncludes?: string;
  readonly contentExcludes?: string;
  /** Where the path does something SPEC says cannot happen then (it feeds a call that has settled, …). */
  readonly problems: readonly string[];
}

/** Judges the call from its setup and what happened, by SPEC. */
export function judgeToolCall(config: ToolCallConfig, events: readonly AnyEventObject[], rules: OracleRules = SPEC_RULES): ToolCallVerdict {
  const t = scenarioTexts;
  const all = events.map(happeningOf);
  const unknown = all.findIndex((h) => h.kind === 'unknown');
  const problems: string[] = [];
  if (unknown >= 0) problems.push(`the SPEC oracle does not know what ${events[unknown]!.type} means for a call: teach it in toolCall.oracle.ts`);
  const queue = unknown >= 0 ? all.slice(0, unknown) : all;
  let bodyRuns = false;
  let approvalAsked = false;
  let postListenerRuns = false;

  const settle = (code: string, because: string, extra: Partial<ToolCallVerdict> = {}): ToolCallVerdict => {
    if (queue.length) problems.push(`SPEC settles the call ${code} (${because}), but the path goes on: ${queue.map((h) => h.kind).join(', ')}`);
    return { code, because, bodyRuns, approvalAsked, postListenerRuns, failedListeners: [], problems, ...extra };
  };
  /** The next happening while the call waits for `what`; undefined when the path ends first. */
  const next = (what: string): Happening | undefined => {
    const h = queue.shift();
    if (!h) problems.push(`the path ends while the call still waits for ${what}: by SPEC it has not settled`);
    return h;
  };
  const unexpected = (h: Happening, what: string) => problems.push(`the path feeds ${h.kind} while the call waits for ${what}`);
  const unsettled = (): ToolCallVerdict => settle('(not settled)', 'the path ended early');

  // Before stage 1 (SPEC §2 [decision]): resolved and validated.
  if (config.prepare === 'unknown-tool') return settle('UNKNOWN_TOOL', '§2: unknown tool name');
  if (config.prepare === 'invalid-args') return settle('INVALID_ARGS', '§2: arguments fail the input schema');

  // Stage 1: tools/pre-execute (a listener, or none: the default is allow).
  if (config.pre !== 'none') {
    let decision: 'allow' | 'deny' | 'ask' | 'failed';
    if (config.pre === 'pending') {
      const h = next('the pre-execute listener');
      if (!h) return unsettled();
      if (h.kind === 'cancel') return settle('ABORTED_BEFORE_DISPATCH', '§3/§5: cancelled before dispatch');
      if (h.kind === 'deadline') {
        return settle('HOOK_FAILED', '§8.15: the listener did not answer within hookTimeoutMs; §5: fails closed', { failedListeners: [t.preListener] });
      }
      if (h.kind !== 'pre-decided') {
        unexpected(h, 'the pre-execute listener');
        return unsettled();
      }
      decision = h.decision;
    } else {
      decision = config.pre;
    }
    if (decision === 'deny') return settle('POLICY_DENIED', '§2.1: deny skips the body', { contentIncludes: t.denyReason });
    if (decision === 'failed') return settle('HOOK_FAILED', '§5: a throwing pre-execute listener fails closed', { failedListeners: [t.preListener] });
    if (decision === 'ask' && !config.remembered) {
      // §2.1 ask: continue only on allowed-once / allowed-always; §8.3 any other answer or a timeout denies.
      approvalAsked = true;
      const h = next('the approval answer');
      if (!h) return unsettled();
      if (h.kind === 'cancel') return settle('ABORTED_BEFORE_DISPATCH', '§2.1: a cancel while the approval is pending');
      if (h.kind === 'deadline') return settle('APPROVAL_DENIED', '§2.1: a timeout denies');
      if (h.kind !== 'approval') {
        unexpected(h, 'the approval answer');
        return unsettled();
      }
      if (h.answer !== 'allowed-once' && h.answer !== 'allowed-always') return settle('APPROVAL_DENIED', `§8.3: the answer "${h.answer}" denies`);
    }
    // allow, an allowed ask, or an ask already allowed-always for this call (§8.3: not asked again).
  }

  // Stage 2: the monotonic guard (no allow branch).
  if (config.guard === 'deny') return settle('GUARD_DENIED', '§2.2: the guard returned a reason', { contentIncludes: t.guardReason });
  if (config.guard === 'failed') return settle('HOOK_FAILED', '§5: a throwing guard fails closed', { failedListeners: [t.guardListener] });

  // Stages 3–4: dispatched to the body.
  bodyRuns = true;
  let h = next('the tool body');
  if (!h) return unsettled();
  if (h.kind === 'deadline') return settle('TIMEOUT', '§8.15: the call passed its overall deadline');
  if (h.kind === 'cancel') {
    // §3: its signal is aborted; it settles first, as ABORTED unless it had already produced a result.
    h = next('the aborted body');
    if (!h) return unsettled();
    if (h.kind === 'deadline') return settle('ABORTED', '§5: a body that ignores its signal is settled ABORTED after the grace period');
    if (h.kind !== 'body-settled') {
      unexpected(h, 'the aborted body');
      return unsettled();
    }
    if (!h.ok) return settle('ABORTED', '§3: a started call ends ABORTED');
    if (rules.bodyValueAfterCancel === 'aborted') {
      return settle('ABORTED', '§3/§8.9: the body produced its value after the cancel, not before');
    }
  } else if (h.kind !== 'body-settled') {
    unexpected(h, 'the tool body');
    return unsettled();
  } else if (!h.ok) {
    return settle('TOOL_FAILED', '§5/§6: the body threw an ordinary error');
  }

  // Stage 5: tools/post-execute (the body produced its value).
  if (config.post === 'none') return settle('ok', '§2: no listener changes the result', { contentIncludes: t.bodyValue });
  postListenerRuns = true;
  let decision: 'accepted' | 'blocked' | 'invalid-output' | 'failed';
  if (config.post === 'pending') {
    let p = next('the post-execute listener');
    // §8.9: the body finished before a cancel here, so the call keeps its result: a cancel changes nothing.
    while (p?.kind === 'cancel') p = next('the post-execute listener');
    if (!p) return unsettled();
    if (p.kind === 'deadline') {
      return settle('HOOK_FAILED', '§8.15: the listener did not answer within hookTimeoutMs; §5: fails closed', {
        failedListeners: [t.postListener],
        contentExcludes: t.bodyValue,
      });
    }
    if (p.kind !== 'post-decided') {
      unexpected(p, 'the post-execute listener');
      return unsettled();
    }
    decision = p.decision;
  } else {
    decision = config.post;
  }
  if (decision === 'blocked') return settle('POST_EXECUTE_BLOCKED', '§2.5: block + feedback', { contentIncludes: t.blockFeedback });
  if (decision === 'invalid-output') return settle('INVALID_OUTPUT', '§2.5: a replaced value is re-validated against the output schema');
  if (decision === 'failed') {
    return settle('HOOK_FAILED', '§5: a throwing post-execute listener fails closed; §8.5: its content does not reach the model', {
      failedListeners: [t.postListener],
      contentExcludes: t.bodyValue,
    });
  }
  return settle('ok', '§2.5: accepted', { contentIncludes: t.bodyValue });
}
