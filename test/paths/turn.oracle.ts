/**
 * What SPEC says a turn does, given what happened along a turn path: the caller starts it (or its
 * signal was already aborted), each step ends (answered, with tool calls, failed, or cancelled) or
 * its actor crashes, and the caller may cancel while a step runs.
 *
 * Written from SPEC §1, §5 and §8.13 (and the protocol's turn outcomes; issue 12 for a response that
 * broke off after a tool call arrived and was retried: the turn keeps the call and goes on with a
 * new step, like after any step with tool calls), never from `machines/turn.ts`.
 */
import type { AnyEventObject } from 'xstate';
import type { StepEnd } from './turn.model.js';

export type TurnHappening =
  | { readonly kind: 'start' }
  | { readonly kind: 'cancel' }
  | { readonly kind: 'step-ended'; readonly end: StepEnd }
  | { readonly kind: 'step-crashed' }
  | { readonly kind: 'unknown'; readonly type: string };

export function turnHappeningOf(e: AnyEventObject): TurnHappening {
  if (e.type === 'START') return { kind: 'start' };
  if (e.type === 'CANCEL') return { kind: 'cancel' };
  if (e.type === 'xstate.done.actor.step') return { kind: 'step-ended', end: e.end as StepEnd };
  if (e.type === 'xstate.error.actor.step') return { kind: 'step-crashed' };
  return { kind: 'unknown', type: e.type };
}

export interface TurnVerdict {
  readonly outcome: string | undefined;
  /** Steps opened, each with one model request (§8.13: `maxSteps: n` means at most n). */
  readonly steps: number;
  /** `turn/start`, `turn/end <outcome> steps=<n>`: exactly one each (§1, §8.13). */
  readonly log: readonly string[];
  readonly problems: readonly string[];
}

export function judgeTurn(events: readonly AnyEventObject[], maxSteps: number): TurnVerdict {
  const problems: string[] = [];
  let steps = 0;
  let cancelled = false;
  let outcome: string | undefined;
  let phase = 'idle' as 'idle' | 'stepping' | 'ended';
  const end = (o: string) => {
    outcome = o;
    phase = 'ended';
  };
  for (const [i, e] of events.entries()) {
    const h = turnHappeningOf(e);
    if (h.kind === 'unknown') {
      problems.push(`the SPEC oracle does not know what ${h.type} means for a turn: teach it in turn.oracle.ts`);
      continue;
    }
    if (phase === 'ended') {
      problems.push(`the turn ended (${outcome}), but the path goes on with ${events.slice(i).map((x) => x.type).join(', ')}`);
      break;
    }
    if (phase === 'idle') {
      if (h.kind === 'start') {
        phase = 'stepping';
        steps = 1;
      } else if (h.kind === 'cancel') {
        end('cancelled'); // the signal was aborted before the turn started: no step, no request
      } else {
        problems.push(`a step ends before the turn started`);
      }
      continue;
    }
    if (h.kind === 'start') problems.push('a second START');
    else if (h.kind === 'cancel') cancelled = true; // the running step is told; it ends cancelled
    else if (h.kind === 'step-crashed') end('failed'); // README: the turn still closes the step and ends failed
    else if (cancelled || h.end === 'cancelled') end('cancelled');
    else if (h.end === 'failed') end('failed'); // §5: the retry policy gave up
    else if (h.end === 'answered') end('completed'); // no tool calls: the model answered
    else if (steps >= maxSteps) end('max-steps'); // §8.13 (a retry after a broken-off response too: it is a new request)
    else steps++; // the tool results go back to the model in a new step (issue 12: also after a broken-off, retried response)
  }
  if (phase !== 'ended') problems.push('the path ends before the turn ended by SPEC');
  return { outcome, steps, log: ['turn/start', ...(outcome ? [`turn/end ${outcome} steps=${steps}`] : [])], problems };
}
