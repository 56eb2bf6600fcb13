/**
 * What SPEC says one step does, given what happened along a step path: the model's streamed
 * response (text, tool calls, its finish, or an error), the retry policy's classification of a
 * failed request (the path's configuration: retry after a backoff, compact, give up; whether
 * compaction shrank the prompt), the backoff passing, the caller's cancel, and the step's tools
 * finishing.
 *
 * Written from SPEC §1, §5 and §8.13 (and issue 12: a connection dropped after calls arrived keeps
 * what completed and goes on with a new request), never from `machines/step.ts`.
 *
 * A failed request, by SPEC §5 and §8.13: it logs one `agent/request-error` with the policy's
 * decision. Before any tool call arrived, the step itself may request again, but only after the
 * logged backoff (`retry`) or a compaction that shrank the prompt (`compact`); otherwise it gives up
 * and the turn fails. After tool calls arrived, the step never re-requests (a new request must see
 * their results): it ends; when the decision was `retry` the calls it has are kept (they run and
 * their results are committed) and the turn goes on with a new step, a new model request bounded
 * by `maxSteps` (§8.13); any other decision gives up and the turn fails.
 */
import type { AnyEventObject } from 'xstate';
import type { StepConfig } from './step.model.js';

export type StepHappening =
  | { readonly kind: 'text' }
  | { readonly kind: 'tool-call' }
  | { readonly kind: 'finish'; readonly reason: string }
  | { readonly kind: 'request-failed' }
  | { readonly kind: 'cancel' }
  /** Fake time moved to the next deadline: the backoff before a retry. */
  | { readonly kind: 'deadline' }
  | { readonly kind: 'tools-done' }
  | { readonly kind: 'unknown'; readonly type: string };

export function stepHappeningOf(e: AnyEventObject): StepHappening {
  if (e.type === 'MODEL.TEXT') return { kind: 'text' };
  if (e.type === 'MODEL.TOOL_CALL') return { kind: 'tool-call' };
  if (e.type === 'MODEL.FINISH') return { kind: 'finish', reason: e.finishReason };
  if (e.type === 'MODEL.ERROR') return { kind: 'request-failed' };
  if (e.type === 'CANCEL') return { kind: 'cancel' };
  if (e.type.startsWith('xstate.after.')) return { kind: 'deadline' };
  if (e.type === 'xstate.done.actor.scheduler') return { kind: 'tools-done' };
  return { kind: 'unknown', type: e.type };
}

export interface StepVerdict {
  /** Model requests the step made (§5: a retry only after a backoff or a compaction that shrank the prompt; none after tool calls arrived). */
  readonly requests: number;
  /** `agent/request-error` events: one per failed request (§8.13). */
  readonly requestErrors: number;
  /** The `action` each `agent/request-error` logs, in order (§5: the policy decides; a retry is logged as such). */
  readonly requestErrorActions: readonly string[];
  /**
   * Result codes of the step's calls, in order, when the caller did not cancel: every call is safe
   * (concurrency limit 8) and so started when it arrived (§8.12), and a started call keeps its
   * result whatever the response does afterwards (§3; issue 12: a broken-off response keeps them).
   * Undefined after a cancel (the scheduler oracle judges cancels).
   */
  readonly callResults: readonly string[] | undefined;
  /** `step/end <finish> calls=<n>`: the step is closed exactly once, whatever happened (§8.13). */
  readonly stepEnd: string;
  /**
   * The turn's outcome when this step is its first (a step that calls tools, or whose response broke
   * off after calls arrived and is retried, is followed by one that answers).
   */
  readonly turnOutcome: 'completed' | 'failed' | 'cancelled';
  readonly problems: readonly string[];
}

export function judgeStep(config: StepConfig, events: readonly AnyEventObject[]): StepVerdict {
  const problems: string[] = [];
  let phase = (config.start === 'cancelled' ? 'tools' : 'streaming') as 'streaming' | 'backoff' | 'tools' | 'ended';
  let requests = config.start === 'cancelled' ? 0 : 1;
  let requestErrors = 0;
  const requestErrorActions: string[] = [];
  let calls = 0;
  let cancelled = config.start === 'cancelled';
  let failed = false;
  /** The response broke off after calls arrived: the step ends `error`, failed or not. */
  let brokeOff = false;
  let finish = 'unknown';
  // Once the response is over and no call arrived, there is nothing to wait for: the step ends.
  const endIfNoCalls = () => {
    if (phase === 'tools' && calls === 0) phase = 'ended';
  };
  endIfNoCalls();
  for (const [i, e] of events.entries()) {
    const h = stepHappeningOf(e);
    if (h.kind === 'unknown') {
      problems.push(`the SPEC oracle does not know what ${h.type} means for a step: teach it in step.oracle.ts`);
      continue;
    }
    if (phase === 'ended') {
      problems.push(`the step ended, but the path goes on with ${events.slice(i).map((x) => x.type).join(', ')}`);
      break;
    }
    if (h.kind === 'cancel') {
      cancelled = true;
      if (phase !== 'tools') phase = 'tools'; // the request (or the wait for a retry) stops; started tools settle
      endIfNoCalls();
      continue;
    }
    if (phase === 'streaming') {
      if (h.kind === 'text') continue;
      if (h.kind === 'tool-call') calls++;
      else if (h.kind === 'finish') {
        finish = h.reason;
        phase = 'tools';
      } else if (h.kind === 'request-failed') {
        requestErrors++; // §8.13: every failed request logs one agent/request-error
        if (calls > 0) {
          // Part of the response was already acted on (its calls may be running): re-requesting in this
          // step would repeat them. Issue 12: on a retry, keep them and go on with a new step (a new
          // request, after their results); any other decision gives up.
          requestErrorActions.push(config.decision === 'retry' ? 'retry' : 'give-up');
          brokeOff = true;
          if (config.decision !== 'retry') failed = true;
          phase = 'tools';
        } else if (config.decision === 'retry') {
          requestErrorActions.push('retry');
          phase = 'backoff'; // §5: a retry after the logged backoff
        } else if (config.decision === 'compact') {
          requestErrorActions.push('compact');
          if (config.shrinks) requests++; // §5: a retry after a persistent reduction
          else {
            failed = true; // §5: compaction could not shrink the prompt: no retry in place
            phase = 'tools';
          }
        } else {
          requestErrorActions.push('give-up');
          failed = true; // §5: the policy gives up
          phase = 'tools';
        }
      } else problems.push(`${h.kind} while the model streams`);
    } else if (phase === 'backoff') {
      if (h.kind === 'deadline') {
        requests++;
        phase = 'streaming';
      } else problems.push(`${h.kind} while the step waits to retry`);
    } else if (phase === 'tools') {
      if (h.kind === 'tools-done') phase = 'ended';
      else problems.push(`${h.kind} after the response ended`);
    }
    endIfNoCalls();
  }
  if (phase !== 'ended') problems.push('the path ends before the step ended by SPEC');
  const reason = cancelled ? 'cancelled' : failed || brokeOff ? 'error' : finish;
  return {
    requests,
    requestErrors,
    requestErrorActions,
    callResults: cancelled ? undefined : Array.from({ length: calls }, () => 'ok'),
    stepEnd: `step/end ${reason} calls=${calls}`,
    turnOutcome: cancelled ? 'cancelled' : failed ? 'failed' : 'completed',
    problems,
  };
}
