/**
 * `replaySessions`: recorded sessions against today's code and configuration. Every call a session
 * log recorded goes through today's agent (its TypeScript listeners, guards and rules, or the
 * policies `install` puts on a runtime of stand-in tools), with its body replaced by what it
 * returned then, so nothing a call asks for happens again; each decision (allow, ask, deny) is
 * compared with what the log says happened, and every one that changed is reported.
 * `dsh policy replay` is this, with the project's config installed.
 */
import type { LogEvent } from '../../protocol/index.js';
import { ManualClock } from '../../runtime/clock.js';
import { createMemoryLog } from '../../runtime/log/sessionLog.js';
import { askedQuestions, createPolicyChecker, policyCheckerOn, type PolicyChecker } from '../../runtime/policies/policyCheck.js';
import type { Runtime } from '../../runtime/createRuntime.js';
import { createReplayTally, recordedCallStream, type FailOn, type RecordedCall, type ReplayReport } from '../../cli/policy/replay.js';
import type { RuntimeFactory } from '../explore/world.js';

export { FAIL_ON, failsOn, type FailOn, type RecordedCall, type ReplayChange, type ReplayReport } from '../../cli/policy/replay.js';

/** A recorded session: its events, or a function that hands them on in order (awaiting `drain` now and then, so a long log is read in bounded memory). */
export interface RecordedSession {
  readonly name: string;
  /** Its events in order, or a function that hands them on (awaiting `drain` now and then). */
  readonly events: Iterable<LogEvent> | ((onEvent: (event: LogEvent) => void, drain: () => Promise<void>) => Promise<unknown>);
}

/** How `replaySessions` replays: the policies to install, and which changes fail it. */
export type ReplaySessionsOptions = {
  /** Which changes count as failures (default: a call that ran then would now be denied, and a denied one would now run). */
  failOn?: readonly FailOn[];
} & (
  | {
      /** Today's agent, built as for `explore`: `(world) => createRuntime({ ...world, tools })`, listeners registered inside. */
      runtime: RuntimeFactory;
    }
  | {
      /** Policies to install on a runtime of stand-in tools (what `dsh policy replay` does with the config). */
      install: (rt: Runtime) => void | Promise<void>;
      /** Tools plan mode treats as read-only. */
      readOnlyTools?: ReadonlySet<string>;
    }
);

/** The checker of a replay: on the user's agent, or on installed policies. */
async function checkerOf(options: ReplaySessionsOptions): Promise<PolicyChecker> {
  if ('install' in options) return createPolicyChecker({ install: options.install, ...(options.readOnlyTools ? { readOnlyTools: options.readOnlyTools } : {}) });
  const asking = askedQuestions();
  const clock = new ManualClock();
  const rt = options.runtime({ log: createMemoryLog({ clock }), clock, approval: asking.approval, inspect: () => undefined, wrapListener: (_hook, _name, fn) => fn, run: 0, process: 1 });
  const checker = policyCheckerOn(rt, asking);
  return checker;
}

/**
 * Replays the sessions' calls against today's agent and reports every decision that changed.
 *
 * @example
 * ```ts
 * const report = await replaySessions([{ name: 'yesterday', events: loggedEvents }], {
 *   runtime: (world) => createRuntime({ ...world, tools: [read, write] }),
 * });
 * report.changes; // [{ callId, toolName, then: 'allow', now: 'deny', … }]
 * ```
 */
export async function replaySessions(sessions: Iterable<RecordedSession> | AsyncIterable<RecordedSession>, options: ReplaySessionsOptions): Promise<ReplayReport> {
  const checker = await checkerOf(options);
  const tally = createReplayTally(checker, options.failOn ?? ['ran-now-denied', 'denied-now-runs']);
  let count = 0;
  try {
    for await (const session of sessions) {
      count++;
      const ready: RecordedCall[] = [];
      const stream = recordedCallStream(session.name, (c) => ready.push(c));
      const drain = async () => {
        for (const c of ready.splice(0)) await tally.check(c);
      };
      if (typeof session.events === 'function') await session.events((e) => stream.onEvent(e), drain);
      else for (const e of session.events) stream.onEvent(e);
      await drain();
      tally.skip(stream.end());
    }
  } finally {
    await checker.close();
  }
  return tally.report(count);
}
