/**
 * What SPEC says one step does, given what happened along a step path: the model's streamed
 * response (text, tool calls, its finish, or an error), the retry policy's classification of a
 * failed request (the path's configuration: retry after a backoff, compact, give up; whether
 * compaction shrank the prompt), the backoff passing, the caller's cancel, and the step's tools
 * finishing.
 *
 * Written from SPEC §1, §5 and §8.13, never from `machines/step.ts`.
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
  /** Model requests the step made (§5: a retry only after a backoff or a compaction that shrank the prompt). */
  readonly requests: number;
  /** `agent/request-error` events: one per failed request (§8.13). */
  readonly requestErrors: number;
  /** `step/end <finish> calls=<n>`: the step is closed exactly once, whatever happened (§8.13). */
  readonly stepEnd: string;
  /** The turn's outcome when this step is its first (a step that calls tools is followed by one that answers). */
  readonly turnOutcome: 'completed' | 'failed' | 'cancelled';
  readonly problems: readonly string[];
}

export function judgeStep(config: StepConfig, events: readonly AnyEventObject[]): StepVerdict {
  const problems: string[] = [];
  let phase = (config.start === 'cancelled' ? 'tools' : 'streaming') as 'streaming' | 'backoff' | 'tools' | 'ended';
  let requests = config.start === 'cancelled' ? 0 : 1;
  let requestErrors = 0;
  let calls = 0;
  let cancelled = config.start === 'cancelled';
  let failed = false;
  let finish = 'unknown';
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
          // Part of the response was already acted on (its calls may be running): retrying would repeat them.
          failed = true;
          phase = 'tools';
        } else if (config.decision === 'retry') {
          phase = 'backoff';
        } else if (config.decision === 'compact' && config.shrinks) {
          requests++; // §5: a retry after a persistent reduction
        } else {
          failed = true; // §5: no retry in place: give up (or compaction could not shrink the prompt)
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
  }
  if (phase !== 'ended') problems.push('the path ends before the step ended by SPEC');
  const reason = cancelled ? 'cancelled' : failed ? 'error' : finish;
  return {
    requests,
    requestErrors,
    stepEnd: `step/end ${reason} calls=${calls}`,
    turnOutcome: cancelled ? 'cancelled' : failed ? 'failed' : 'completed',
    problems,
  };
}
