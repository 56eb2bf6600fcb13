/**
 * Stage 2, the monotonic guard (SPEC §2.2): a string denies, undefined changes nothing, anything
 * else (or a throw) fails closed. The call consults the guards registered when it started.
 */
import type { GuardOutcome, PreparedCall } from '../../../machines/callStages.js';
import { describeThrown } from '../../protocol/index.js';
import { boundedVisible } from '../../protocol/visibleText.js';
import { isPromise, MAX_RULE_LENGTH } from './listenerAnswers.js';
import { guardsOf } from './prepare.js';
import type { StageDeps } from './stageDeps.js';

/** True when the call has guards to consult. */
export const hasGuards = (deps: Pick<StageDeps, 'guards'>, p: PreparedCall): boolean => guardsOf(p, deps).length > 0;

export function runGuards(deps: Pick<StageDeps, 'guards'>, p: PreparedCall): GuardOutcome {
  for (const g of guardsOf(p, deps)) {
    let r: unknown;
    try {
      r = g.fn(p.view);
    } catch (e) {
      return { kind: 'failed', hook: 'tools/guard', listener: g.name, message: describeThrown(e) };
    }
    if (typeof r === 'string') return { kind: 'deny', reason: boundedVisible(r), listener: g.name };
    const named = readNamedDenial(r);
    if (named) return { kind: 'deny', ...named, listener: g.name };
    if (r !== undefined) {
      return {
        kind: 'failed',
        hook: 'tools/guard',
        listener: g.name,
        message: `returned ${isPromise(r) ? 'a promise' : typeof r}; a guard returns a string or { reason, rule } (deny) or undefined`,
      };
    }
  }
  return undefined;
}

/** A guard's `{ reason, rule }` denial, read once field by field (user data); undefined when it is none. */
function readNamedDenial(r: unknown): { reason: string; rule?: string } | undefined {
  // A thenable is never a denial, whatever it carries (a guard answers synchronously).
  if (isPromise(r)) return undefined;
  try {
    // Destructuring null or undefined throws (caught: none); a primitive has neither field.
    const { reason, rule } = r as { reason?: unknown; rule?: unknown };
    if (typeof reason !== 'string' || (rule !== undefined && typeof rule !== 'string')) return undefined;
    return rule === undefined ? { reason: boundedVisible(reason) } : { reason: boundedVisible(reason), rule: rule.slice(0, MAX_RULE_LENGTH) };
  } catch {
    // unreadable: no denial
  }
  return undefined;
}
