/**
 * Stage 1, `tools/pre-execute` (SPEC §2.1, §8.1–8.2): a waterfall of listeners. Each answers
 * allow / deny / ask, or hands over with `next()`; when every one hands over, the call is allowed.
 * A listener that throws or answers nonsense fails the call closed, even when an earlier listener
 * catches the rejection of its `next()`. Each asynchronous listener gets its own `hookTimeoutMs`
 * while the stage waits on it (SPEC §8.15).
 */
import type { PreExecuteOutcome, PreparedCall, SyncOrAsync } from '../../../machines/callStages.js';
import { describeThrown, type PreExecuteDecision } from '../../protocol/index.js';
import { ALLOW, describeDecision, isPromise, readPreDecision } from './listenerAnswers.js';
import { listenerTimer, type ListenerTimer } from './listenerTimer.js';
import type { StageDeps } from './stageDeps.js';

/** True when some pre-execute listener is registered (else the stage is skipped). */
export const hasPreExecute = (deps: Pick<StageDeps, 'hooks'>): boolean => deps.hooks.list('tools/pre-execute').length > 0;

export function runPreExecute(deps: Pick<StageDeps, 'hooks' | 'clock' | 'limits'>, p: PreparedCall): SyncOrAsync<PreExecuteOutcome> {
  const listeners = deps.hooks.list('tools/pre-execute');
  // The innermost listener that has not answered yet: when a listener hangs after its next() came
  // back, it is the one the stage waits on (and a timeout names), not the last one consulted.
  let waitingOn: string | undefined;
  // Armed once the stage goes asynchronous; re-armed for each listener the stage then waits on.
  let timer: ListenerTimer | undefined;
  let over = false;
  const waitOn = (name: string) => {
    waitingOn = name;
    timer?.waitOn(name);
  };
  // The first failure decides, even if an earlier listener catches its next() rejection (SPEC §8.2).
  let failure: { listener: string; message: string } | undefined;
  const failed = (): PreExecuteOutcome => ({
    kind: 'failed',
    hook: 'tools/pre-execute',
    // Stryker disable next-line ObjectLiteral,LogicalOperator,StringLiteral: a fallback never taken (every failure is noted before failed() is called); kept so a future path cannot fail open
    ...(failure ?? { listener: waitingOn ?? '?', message: 'the pre-execute chain failed' }),
  });
  const noteFailure = (listener: string, e: unknown) => {
    failure ??= { listener, message: describeThrown(e) };
    return e;
  };
  // Who gave each decision (read afresh by readPreDecision, so each answer is its own object).
  const deciders = new Map<PreExecuteDecision, string | undefined>();
  const withDecider = (d: PreExecuteDecision): PreExecuteOutcome => {
    const by = deciders.get(d);
    // Stryker disable next-line ConditionalExpression: { ...d, by: undefined } is the same decision (an absent `by`)
    return by === undefined ? d : { ...d, by };
  };
  // Stryker disable next-line ArrayDeclaration: every index is written before it is read
  const pending: boolean[] = [];
  const answered = (i: number) => {
    pending[i] = false;
    const j = pending.lastIndexOf(true);
    if (j >= 0) waitOn(listeners[j]!.name);
  };
  // Every listener promise, so that a chain an earlier listener started but did not wait for
  // is still waited for: its failure fails the call too (and is never an unhandled rejection).
  const started: Promise<unknown>[] = [];
  const dispatch = (i: number): SyncOrAsync<PreExecuteDecision> => {
    if (i >= listeners.length) return ALLOW;
    // A listener handing over after the stage timed out starts nobody: the call is already settled.
    if (over) return Promise.reject(new Error('the pre-execute stage is over'));
    const l = listeners[i]!;
    pending[i] = true;
    waitOn(l.name);
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
      // A listener passing on what its next() answered did not decide: the one that answered did
      // (nobody, when that was the chain's own ALLOW).
      deciders.set(d, answer === ALLOW ? undefined : deciders.has(answer) ? deciders.get(answer) : l.name);
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
  let result: SyncOrAsync<PreExecuteDecision> | undefined;
  try {
    result = dispatch(0);
  } catch {
    // noted: `failure` is set, and decides below
  }
  if (!isPromise(result) && started.length === 0) {
    // Decided at once: a listener handing over later (from a timer) starts nobody.
    over = true;
    return failure ? failed() : withDecider(result!);
  }
  const allSettled = async (): Promise<void> => {
    // A listener may start another one late (after an await): wait until none is left.
    for (let seen = 0; seen < started.length; ) {
      // Stryker disable next-line MethodExpression: awaiting settled promises again changes nothing
      const batch = started.slice(seen);
      seen = started.length;
      await Promise.allSettled(batch);
    }
  };
  const chain = (async (): Promise<PreExecuteOutcome> => {
    let d: PreExecuteDecision | undefined;
    try {
      d = await result;
    } catch {
      // noted: `failure` is set, and decides below
    }
    await allSettled();
    return failure ? failed() : withDecider(d!);
  })();
  const ms = deps.limits.hookTimeoutMs;
  return new Promise<PreExecuteOutcome>((resolve) => {
    timer = listenerTimer(deps.clock, ms, (listener) => {
      over = true;
      failure ??= { listener, message: `no answer within ${ms} ms` };
      resolve(failed());
    });
    // dispatch(0) waited on the first listener (the stage runs only when there is one).
    timer.waitOn(waitingOn!);
    void chain.then((outcome) => {
      over = true;
      timer!.stop();
      resolve(outcome);
    });
  });
}
