/**
 * What a set of policies decides about a call, without running it: the call goes through a real
 * runtime's pipeline (pre-execute waterfall, approval, guards, in SPEC order) whose tools are
 * stand-ins with the recorded names and no body, so nothing a call asks for ever happens. Used by
 * the examples rules carry (`dsh policy test`, checked when a config loads) and by
 * `dsh policy replay`. Browser-safe: what the policies are is the caller's `install`.
 *
 * The outcome is `deny` when a pre-execute listener or a guard denied the call or failed closed
 * (`HOOK_FAILED`); `ask` when a listener asked (the stand-in approval says yes, so a guard that
 * would still deny it after a yes makes it `deny`); `invalid` when its input is no JSON object;
 * else `allow`.
 */
import * as z from 'zod';
import type { DecisionProvenance, ErrorCode } from '../../protocol/index.js';
import { createRuntime, type Runtime } from '../createRuntime.js';
import { defineTool } from '../defineTool.js';

/** `invalid`: the call never reached the policies (its input is not a JSON object). */
export type PolicyOutcome = 'allow' | 'ask' | 'deny' | 'invalid';

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
}

export interface PolicyCheckerOptions {
  /** Installs the policies on the checking runtime (e.g. `(rt) => applyConfig(rt, config, { root })`). */
  readonly install: (rt: Runtime) => void | Promise<void>;
  /** Names of the tools that are read-only (plan mode lets them run): dsh's `read`, `grep`, `glob`… */
  readonly readOnlyTools?: ReadonlySet<string>;
}

export interface PolicyChecker {
  /** What the policies decide about `call`. Never throws; calls are checked one at a time. */
  check(call: PolicyCall): Promise<PolicyVerdict>;
  close(): Promise<void>;
}

const ANY_ARGS = z.record(z.string(), z.unknown());

/** A checker over the policies `install` puts on a fresh runtime. */
export async function createPolicyChecker(options: PolicyCheckerOptions): Promise<PolicyChecker> {
  const asked = new Map<string, string | undefined>();
  const rt = createRuntime({
    approval: {
      request: async (req) => {
        asked.set(req.callId, req.reason);
        return 'allowed-once';
      },
    },
    // No result is ever large: the stand-ins return nothing.
  });
  await options.install(rt);
  const readOnly = options.readOnlyTools ?? new Set<string>();
  const known = new Set<string>();
  const standIn = (name: string) => {
    if (known.has(name)) return;
    known.add(name);
    rt.tools.register(defineTool({ name, description: `stand-in for ${name}: no body`, input: ANY_ARGS, readOnly: readOnly.has(name), execute: () => '' }));
  };
  let n = 0;
  let queue: Promise<unknown> = Promise.resolve();
  const checkOne = async (call: PolicyCall): Promise<PolicyVerdict> => {
    standIn(call.toolName);
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
