/**
 * What a set of policies decides about a call, without running it: the call goes through a real
 * runtime's pipeline (pre-execute waterfall, approval, guards, in SPEC order) whose tools are
 * stand-ins with the recorded names and no body, so nothing a call asks for ever happens. Used by
 * the examples rules carry (`dsh policy test`, checked when a config loads) and by
 * `dsh policy replay`. Browser-safe: what the policies are is the caller's `install`.
 *
 * The outcome is `deny` when a pre-execute listener or a guard denied the call or failed closed
 * (`HOOK_FAILED`); `ask` when a listener asked (the stand-in approval says yes, so a guard that
 * would still deny it after a yes makes it `deny`); `invalid` when its input is no JSON object
 * (or it names no tool a call could have, `UNKNOWN_TOOL`);
 * else `allow`.
 */
import * as z from 'zod';
import type { DecisionProvenance, ErrorCode } from '../../protocol/index.js';
import { createRuntime, type Runtime } from '../createRuntime.js';
import { defineTool } from '../defineTool.js';
import type { ApprovalService } from '../pipeline/approvalService.js';

/** `invalid`: the call never reached the policies (its input is not a JSON object, or its tool's name is not one a tool can have). */
export type PolicyOutcome = 'allow' | 'ask' | 'deny' | 'invalid';

/** What the policies decide about a call, who decided, and why. */
export interface PolicyVerdict {
  readonly outcome: PolicyOutcome;
  /** Who decided (absent for a call every policy handed over). */
  readonly decision?: DecisionProvenance;
  /** The error code a denied call ended with (POLICY_DENIED, GUARD_DENIED, HOOK_FAILED). */
  readonly code?: ErrorCode;
  /** The reason a denied call was given, or the question an asked one raised. */
  readonly reason?: string;
}

/** A call to check: the tool's name and its arguments (a JSON object, or the raw JSON text the model sent). */
export interface PolicyCall {
  readonly toolName: string;
  readonly input: unknown;
  /** What the call returned then (a replay's recorded result), handed to post-execute listeners. */
  readonly content?: string;
}

/** How a policy checker is set up: the policies it installs, and which tools are read-only. */
export interface PolicyCheckerOptions {
  /** Installs the policies on the checking runtime (e.g. `(rt) => applyConfig(rt, config, { root })`). */
  readonly install: (rt: Runtime) => void | Promise<void>;
  /** Names of the tools that are read-only (plan mode lets them run): dsh's `read`, `grep`, `glob`… */
  readonly readOnlyTools?: ReadonlySet<string>;
}

/** Runs calls through the policies alone (no body runs): what `dsh policy test` and `replaySessions` use. */
export interface PolicyChecker {
  /** What the policies decide about `call`. Never throws; calls are checked one at a time. */
  check(call: PolicyCall): Promise<PolicyVerdict>;
  /** Closes the checker's runtime. */
  close(): Promise<void>;
}

const ANY_ARGS = z.record(z.string(), z.unknown());

/** A checker over the policies `install` puts on a fresh runtime. */
export async function createPolicyChecker(options: PolicyCheckerOptions): Promise<PolicyChecker> {
  const asking = askedQuestions();
  // No result is ever large: the stand-ins return nothing.
  const rt = createRuntime({ approval: asking.approval });
  await options.install(rt);
  return policyCheckerOn(rt, asking, options.readOnlyTools);
}

/** An approval service that says yes to every question and remembers it was asked (and why), by call id. */
export function askedQuestions(): { approval: ApprovalService; asked: Map<string, string | undefined> } {
  const asked = new Map<string, string | undefined>();
  return {
    asked,
    approval: {
      request: async (req) => {
        asked.set(req.callId, req.reason);
        return 'allowed-once';
      },
    },
  };
}

/**
 * A checker over a runtime already built (whose approval service is `asking.approval`): calls go
 * through its pipeline one at a time. Its tools' bodies are replaced by stand-ins that return the
 * recorded content of the call (`PolicyCall.content`, default empty), so post-execute listeners see
 * what the call returned then and nothing a call asks for happens; a tool it does not have gets a
 * stand-in of that name.
 */
export function policyCheckerOn(rt: Runtime, asking: { asked: Map<string, string | undefined> }, readOnly: ReadonlySet<string> = new Set<string>()): PolicyChecker {
  const asked = asking.asked;
  // Stryker disable next-line StringLiteral: every check sets it before its call runs
  let content = '';
  const standInFor = (name: string, readOnlyTool: boolean, input: z.ZodType = ANY_ARGS) =>
    // Stryker disable next-line StringLiteral: no policy reads a stand-in's description
    defineTool({ name, description: `stand-in for ${name}: no body`, input, readOnly: readOnlyTool, execute: () => content });
  for (const t of rt.tools.list()) {
    rt.tools.unregister(t.name);
    rt.tools.register({ ...standInFor(t.name, t.readOnly, t.input), isConcurrencySafe: t.isConcurrencySafe, approvalKeys: t.approvalKeys });
  }
  const standIn = (name: string) => {
    // Stryker disable next-line ConditionalExpression,ArrowFunction: registering a name that is there throws, and the check goes on with the tool that is there (checkOne catches it)
    if (rt.tools.list().some((t) => t.name === name)) return;
    rt.tools.register(standInFor(name, readOnly.has(name)));
  };
  let n = 0;
  let queue: Promise<unknown> = Promise.resolve();
  const checkOne = async (call: PolicyCall): Promise<PolicyVerdict> => {
    try {
      standIn(call.toolName);
    } catch {
      // A name no tool can have ("a b", ""): the call is UNKNOWN_TOOL, as in a run, never a throw.
    }
    content = call.content ?? '';
    // Stryker disable next-line StringLiteral,UpdateOperator: the calls are checked one at a time and each one's question is read and dropped before the next starts, so nothing depends on the id's spelling
    const callId = `policy-check-${++n}`;
    const r = await rt.runCall({ callId, toolName: call.toolName, input: call.input }).result;
    const question = asked.has(callId);
    const reason = asked.get(callId);
    asked.delete(callId);
    const d = r.decision;
    if (r.isError && d && (d.outcome === 'deny' || d.outcome === 'failed')) return { outcome: 'deny', decision: d, code: r.error.code, reason: r.error.message };
    if (r.isError && !d) {
      // A policy that refused without naming itself (a wrapper of the execute stage) still refused.
      const refused = r.error.code === 'POLICY_DENIED' || r.error.code === 'GUARD_DENIED' || r.error.code === 'HOOK_FAILED';
      return { outcome: refused ? 'deny' : 'invalid', code: r.error.code, reason: r.error.message };
    }
    // Stryker disable next-line ConditionalExpression: a question always has an answer (the stand-in approval's yes), so an asked call always has a decision
    if (question) return { outcome: 'ask', ...(d ? { decision: d } : {}), ...(reason !== undefined ? { reason } : {}) };
    return { outcome: 'allow', ...(d ? { decision: d } : {}) };
  };
  return {
    check: (call) => {
      const next = queue.then(() => checkOne(call));
      queue = next.catch(() => undefined);
      return next;
    },
    close: () => rt.close(),
  };
}
