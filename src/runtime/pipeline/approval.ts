/**
 * `ask` → the approval service (SPEC §2.1, §8.3): asks, accepts only the three answers, and
 * remembers `allowed-always` for the same tool with identical args for the rest of the session,
 * a resumed session included: the memory starts from the `allowed-always` answers in the log.
 * A tool may say what an answer remembers instead (`approvalKeys`): `bash` remembers the whole
 * parsed line in a normal form, so approving `git status && rm -rf x` covers that line respaced,
 * never `rm -rf x` alone nor `rm` with other arguments (docs/policies.md).
 */
import type { PreparedCall } from '../../../machines/callStages.js';
import { ApprovalAnswerSchema, describeThrown, type ApprovalAnswer, type ApprovalDenial, type ApprovalPreview, type LogEventOf } from '../../protocol/index.js';
import { MAX_DENIAL_REASON_CHARS, SUSPEND } from './approvalService.js';
import { parseArgs } from '../args.js';
import { toolOf } from './prepare.js';
import { placeOf, type StageDeps } from './stageDeps.js';
import type { AnyTool } from '../defineTool.js';

/** `{ answer: 'denied', reason }` with a non-empty string reason (cut to the bound), else undefined. */
function readDenial(answer: unknown): ApprovalDenial | undefined {
  // `?.`: null and undefined are no denial; a primitive has no `answer`.
  const a = answer as { answer?: unknown; reason?: unknown } | null | undefined;
  if (a?.answer !== 'denied' || typeof a.reason !== 'string') return undefined;
  const reason = a.reason.trim().slice(0, MAX_DENIAL_REASON_CHARS);
  return reason ? { answer: 'denied', reason } : undefined;
}

export interface ApprovalStage {
  isRemembered(call: PreparedCall): boolean;
  remember(call: PreparedCall): void;
  request(call: PreparedCall, reason: string | undefined, signal: AbortSignal, preview?: ApprovalPreview): Promise<ApprovalAnswer | ApprovalDenial>;
}

/** Canonical JSON (sorted keys) so identical args give identical approval keys. */
function canonicalJson(value: unknown): string {
  // Stryker disable next-line StringLiteral: validated args come from JSON text (no undefined inside); any spelling of one keys the same
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  // Stryker disable next-line StringLiteral: JSON strings delimit each key, so the separator between members is not needed to tell two objects apart
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

/** The key of an `allowed-always`: the tool and its validated args. */
export const approvalKey = (toolName: string, args: unknown): string => `${toolName}\u0000${canonicalJson(args)}`;

/**
 * The keys an `allowed-always` for this call remembers, every one of which a later call needs:
 * the tool's own `approvalKeys` (bash: the parsed line) or the tool and its exact args.
 * Empty: never remembered.
 */
export function approvalKeysOf(tool: Pick<AnyTool, 'name' | 'approvalKeys'>, args: unknown): readonly string[] {
  try {
    return tool.approvalKeys ? (tool.approvalKeys(args) ?? []).map((k) => `${tool.name}\u0001${k}`) : [approvalKey(tool.name, args)];
  } catch {
    // No key can be made (a throwing approvalKeys, args JSON cannot write): nothing is remembered, the question is asked.
    return [];
  }
}

/**
 * The approval keys of the calls the log's index found answered `allowed-always`
 * (`index.rememberedCalls()`, a resumed session's included): each call's input is validated again
 * by the tool (the key is of validated args). A call whose tool is gone, or whose input no longer
 * validates, is not remembered.
 */
export function rememberedInLog(calls: readonly LogEventOf<'tool/call'>[], deps: Pick<StageDeps, 'tools' | 'argLimits'>): Set<string> {
  const keys = new Set<string>();
  for (const call of calls) {
    const tool = deps.tools.get(call.toolName);
    // Stryker disable next-line ConditionalExpression: without the tool, parseArgs below throws and nothing is remembered either
    if (!tool) continue;
    try {
      for (const k of approvalKeysOf(tool, parseArgs(tool, call.input, deps.argLimits))) keys.add(k);
    } catch {
      // no longer valid for the tool: nothing to remember
    }
  }
  return keys;
}

export function createApprovalStage(deps: Pick<StageDeps, 'log' | 'approval' | 'tools' | 'argLimits' | 'suspensions'>): ApprovalStage {
  const { log } = deps;
  // Read from the log on first use (tools registered after the runtime was created count too).
  let remembered: Set<string> | undefined;
  // The answers come from the log's index (a resumed session's too), not from a scan of the log.
  const memory = () => (remembered ??= rememberedInLog(log.index.rememberedCalls(), deps));
  return {
    isRemembered: (p) => {
      const keys = approvalKeysOf(toolOf(p), p.view.args);
      return keys.length > 0 && keys.every((k) => memory().has(k));
    },
    remember: (p) => {
      for (const k of approvalKeysOf(toolOf(p), p.view.args)) memory().add(k);
    },
    async request(p, reason, signal, preview) {
      if (!deps.approval) return 'denied';
      let answer: unknown;
      try {
        answer = await deps.approval.request({ callId: p.view.callId, toolName: p.view.toolName, args: p.view.args, reason, ...(preview ? { preview } : {}) }, signal);
      } catch (e) {
        // The call is denied either way; the log says why when it was not a withdrawal.
        if (!signal.aborted) {
          log.append({ type: 'warning', ...placeOf(p.view), code: 'APPROVAL_FAILED', message: `the approval service failed: ${describeThrown(e)}` });
        }
        throw e;
      }
      if (answer === SUSPEND) {
        // Withdrawn meanwhile: nothing to suspend (the call has moved on and ignores this answer).
        // Stryker disable next-line StringLiteral: the call has moved on and ignores this answer
        if (signal.aborted) return 'denied';
        const { turnId, callId } = p.view;
        if (deps.suspensions.park(turnId, callId)) {
          // Parked: the question stays open until the turn is suspended (and this actor stopped) or
          // the call leaves awaitingApproval (a cancel, the approval timeout).
          return new Promise<never>((_, reject) =>
            signal.addEventListener(
              'abort',
              () => {
                deps.suspensions.unpark(turnId, callId);
                reject(signal.reason);
              },
              // Stryker disable next-line ObjectLiteral,BooleanLiteral: a signal aborts once, so its 'abort' listener runs once either way
              { once: true },
            ),
          );
        }
        log.append({ type: 'warning', ...placeOf(p.view), code: 'APPROVAL_SUSPEND_UNAVAILABLE', message: 'the approval service answered "suspend", but only a call of a running turn can suspend; treated as denied' });
        return 'denied';
      }
      // Anything but the three answers denies (SPEC §8.3), and the log only ever holds those three.
      if (ApprovalAnswerSchema.safeParse(answer).success) return answer as ApprovalAnswer;
      const denial = readDenial(answer);
      if (denial) return denial;
      // A denial whose reason is missing or blank: denied, with nothing to pass on.
      if ((answer as { answer?: unknown } | null | undefined)?.answer === 'denied') return 'denied';
      log.append({
        type: 'warning',
        ...placeOf(p.view),
        code: 'APPROVAL_ANSWER_INVALID',
        message: `the approval service answered ${typeof answer === 'string' ? JSON.stringify(answer.slice(0, 100)) : typeof answer}; treated as denied`,
      });
      return 'denied';
    },
  };
}
