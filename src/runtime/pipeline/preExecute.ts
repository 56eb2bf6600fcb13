/**
 * Stage 1, `tools/pre-execute` (SPEC §2.1, §8.1–8.2): a waterfall of listeners. Each answers
 * allow / deny / ask, or hands over with `next()`; when every one hands over, the call is allowed.
 * A listener that throws or answers nonsense fails the call closed, even when an earlier listener
 * catches the rejection of its `next()`.
 */
import type { PreExecuteOutcome, PreparedCall, StageTrace, SyncOrAsync } from '../../../machines/callStages.js';
import { describeThrown, type PreExecuteDecision } from '../../protocol/index.js';
import { ALLOW, describeDecision, isPromise, readPreDecision } from './listenerAnswers.js';
import type { StageDeps } from './stageDeps.js';

/** True when some pre-execute listener is registered (else the stage is skipped). */
export const hasPreExecute = (deps: Pick<StageDeps, 'hooks'>): boolean => deps.hooks.list('tools/pre-execute').length > 0;

export function runPreExecute(deps: Pick<StageDeps, 'hooks'>, p: PreparedCall, trace: StageTrace): SyncOrAsync<PreExecuteOutcome> {
  const listeners = deps.hooks.list('tools/pre-execute');
  // The first failure decides, even if an earlier listener catches its next() rejection (SPEC §8.2).
  let failure: { listener: string; message: string } | undefined;
  const failed = (): PreExecuteOutcome => ({
    kind: 'failed',
    hook: 'tools/pre-execute',
    ...(failure ?? { listener: trace.listener ?? '?', message: 'the pre-execute chain failed' }),
  });
  const noteFailure = (listener: string, e: unknown) => {
    failure ??= { listener, message: describeThrown(e) };
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
    const settle = (answer: PreExecuteDecision | void): SyncOrAsync<PreExecuteDecision> => {
      if (answer === undefined) return nextCalled ? nextResult! : next();
      const d = readPreDecision(answer);
      if (!d) throw noteFailure(l.name, new TypeError(`returned an invalid decision ${describeDecision(answer)}`));
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
}
