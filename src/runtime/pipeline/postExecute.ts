/**
 * Stage 5, `tools/post-execute` (SPEC §2.5, §8.5): listeners run in order, each seeing the
 * previous one's rewrite. A listener accepts (optionally with new content, metadata or a new value,
 * re-validated), blocks with feedback, or fails the call closed. Each asynchronous listener gets
 * its own `hookTimeoutMs` (SPEC §8.15).
 */
import type { PostExecuteOutcome, PostExecutePlan, PreparedCall, ResultDraft, SyncOrAsync } from '../../../machines/callStages.js';
import { describeThrown, type PostExecuteDecision } from '../../protocol/index.js';
import { deepFreeze } from '../args.js';
import { contentOf, validateOutput } from './draft.js';
import { describeDecision, isPromise, readPostDecision } from './listenerAnswers.js';
import { toolOf } from './prepare.js';
import { listenerTimer } from './listenerTimer.js';
import type { StageDeps } from './stageDeps.js';

/**
 * What the stage does with a draft (SPEC §2.5): skipped when no listener applies; run when one does
 * or cannot tell (its `appliesTo` threw: the stage then fails the call naming it, whatever that
 * `appliesTo` would answer if asked again).
 */
export function planPostExecute(deps: Pick<StageDeps, 'hooks'>, p: PreparedCall, draft: ResultDraft): PostExecutePlan {
  for (const l of deps.hooks.list('tools/post-execute')) {
    if (!l.appliesTo) return RUN;
    try {
      if (l.appliesTo(draft, p.view)) return RUN;
    } catch (e) {
      return { kind: 'appliesTo-failed', listener: l.name, message: `appliesTo failed: ${describeThrown(e)}` };
    }
  }
  return SKIP;
}

const RUN: PostExecutePlan = Object.freeze({ kind: 'run' });
const SKIP: PostExecutePlan = Object.freeze({ kind: 'skip' });

const failed = (listener: string, message: string): PostExecuteOutcome => ({ kind: 'failed', hook: 'tools/post-execute', listener, message });

export function runPostExecute(deps: Pick<StageDeps, 'hooks' | 'clock' | 'limits'>, p: PreparedCall, first: ResultDraft, plan: PostExecutePlan): SyncOrAsync<PostExecuteOutcome> {
  // The listener whose `appliesTo` threw while the stage was planned is the first that applies: nothing ran before it.
  if (plan.kind === 'appliesTo-failed') return failed(plan.listener, plan.message);
  const listeners = deps.hooks.list('tools/post-execute');
  const ms = deps.limits.hookTimeoutMs;
  // Set once a listener has not answered within its own budget: the stage is over, nobody later runs.
  let timedOut: PostExecuteOutcome | undefined;
  let settle: ((o: PostExecuteOutcome) => void) | undefined;
  const timer = listenerTimer(deps.clock, ms, (listener) => {
    timedOut = failed(listener, `no answer within ${ms} ms`);
    // Stryker disable next-line OptionalChaining: the timer fires only after the stage went asynchronous, when `settle` is set
    settle?.(timedOut);
  });
  const tool = toolOf(p);
  // Drafts are frozen: a listener rewrites through its decision (re-validated), never in place.
  let draft = deepFreeze(first);
  const apply = (name: string, answer: PostExecuteDecision | void): PostExecuteOutcome | undefined => {
    if (answer === undefined) return undefined;
    const d = readPostDecision(answer);
    if (!d) return failed(name, `returned an invalid decision ${describeDecision(answer)}`);
    if (d.kind === 'block') return { kind: 'blocked', feedback: d.feedback, listener: name };
    let { value, content, metadata, parts } = draft;
    if (d.value !== undefined) {
      const checked = validateOutput(tool, d.value);
      if (!checked.ok) return { kind: 'invalid-output', message: `post-execute listener "${name}" replaced the value: ${checked.message}` };
      value = checked.value;
      content = contentOf(tool, value);
      parts = undefined; // they came with the replaced value
    }
    if (d.content !== undefined) content = d.content;
    metadata = { ...metadata, ...d.metadata };
    draft = deepFreeze({ value, content, metadata, ...(parts ? { parts } : {}) });
    return undefined;
  };
  const step = (i: number): SyncOrAsync<PostExecuteOutcome> => {
    for (; i < listeners.length; i++) {
      const l = listeners[i]!;
      let r: SyncOrAsync<PostExecuteDecision | void>;
      try {
        if (l.appliesTo) {
          let applies: unknown;
          try {
            applies = l.appliesTo(draft, p.view);
          } catch (e) {
            return failed(l.name, `appliesTo failed: ${describeThrown(e)}`);
          }
          if (!applies) continue;
        }
        r = l.fn(draft, p.view);
      } catch (e) {
        return failed(l.name, describeThrown(e));
      }
      if (isPromise(r)) {
        const at = i;
        timer.waitOn(l.name);
        return Promise.resolve(r).then(
          (d) => {
            if (timedOut) return timedOut;
            try {
              return apply(l.name, d) ?? step(at + 1);
            } catch (e) {
              return failed(l.name, describeThrown(e));
            }
          },
          (e) => failed(l.name, describeThrown(e)),
        );
      }
      let stop: PostExecuteOutcome | undefined;
      try {
        stop = apply(l.name, r);
      } catch (e) {
        stop = failed(l.name, describeThrown(e));
      }
      if (stop) return stop;
    }
    return { kind: 'accepted', draft };
  };
  const outcome = step(0);
  if (!isPromise(outcome)) return outcome;
  return new Promise<PostExecuteOutcome>((resolve) => {
    settle = resolve;
    void outcome.then((o) => {
      timer.stop();
      resolve(o);
    });
  });
}
