/**
 * What SPEC says the life of a turn is, given what happened along a path: its place in the queue
 * comes (or comes while the session is suspended), the caller cancels or steers, room is made
 * before it (when the runtime has a context window), a call parks on a `suspend` answer or stops
 * being parked, the step is quiet, the turn machine ends or crashes.
 *
 * Written from SPEC §8.9 and §8.16 (a turn cancelled before it began logs its start and its end,
 * cancelled, without a model request; one turn at a time), §9.2–§9.4 (a steer is never lost: it
 * waits for the next request, becomes a follow-up turn when the turn can make none, and after a
 * suspension belongs to the request after the suspended step; a suspension happens once the step is
 * quiet, logs `turn/suspended` and ends the turn's process-side life) and the README (a turn queued
 * behind a turn that suspended does not begin; making room failing is a warning, the turn runs),
 * never from `machines/turnLifecycle.ts`.
 */
import type { AnyEventObject } from 'xstate';
import type { LifecycleConfig } from './turnLifecycle.model.js';

export interface LifecycleVerdict {
  /** What the world sees, in order (the recording port's lines). */
  readonly effects: readonly string[];
  /** `suspended`, `dropped`, or the turn's outcome. */
  readonly outcome: string | undefined;
  readonly problems: readonly string[];
}

export function judgeLifecycle(config: LifecycleConfig, events: readonly AnyEventObject[]): LifecycleVerdict {
  const effects: string[] = [];
  const problems: string[] = [];
  let phase = 'queued' as 'queued' | 'making room' | 'running' | 'over';
  let cancelled = false;
  let parked = false;
  let outcome: string | undefined;
  let waiting: string[] = [];
  /** After a suspension, the request a steer belongs to; once over, steers become follow-ups. */
  let nextRequest: number | undefined;
  const run = () => {
    phase = 'running';
    effects.push(cancelled ? 'run the turn, cancelled' : 'run the turn');
  };
  const over = (o: string) => {
    phase = 'over';
    outcome = o;
    if (waiting.length) effects.push(`follow-up ${waiting.map((t) => `"${t}"`).join(' + ')}`);
    waiting = [];
  };
  for (const e of events) {
    if (phase === 'over' && e.type !== 'STEER') {
      problems.push(`the turn is over (${outcome}), but the path goes on with ${e.type}`);
      break;
    }
    switch (e.type) {
      case 'BEGIN':
        if (phase !== 'queued') problems.push('its turn comes twice');
        else if (config.makesRoom) {
          phase = 'making room';
          effects.push('make room');
        } else run();
        break;
      case 'DROP':
        if (phase !== 'queued') problems.push('dropped after it began');
        over('dropped'); // never began: nothing of it runs
        break;
      case 'xstate.done.actor.makeRoom':
      case 'xstate.error.actor.makeRoom': // a warning only: the turn runs
        if (phase !== 'making room') problems.push('room made when none was being made');
        run();
        break;
      case 'CANCEL':
        if (cancelled) break; // a second cancel changes nothing
        cancelled = true;
        if (phase === 'running') effects.push('cancel the turn'); // before it runs: applied as it starts (§8.9)
        break;
      case 'STEER': {
        const text = (e.steer as { text: string }).text;
        if (phase !== 'over') waiting.push(text);
        else if (nextRequest !== undefined) effects.push(`steer "${text}" @${nextRequest}`);
        else effects.push(`follow-up "${text}"`);
        break;
      }
      case 'PARKED':
        if (phase !== 'running') problems.push('a call parks in a turn that does not run');
        parked = true;
        break;
      case 'UNPARKED':
        parked = false;
        break;
      case 'QUIET':
        if (phase !== 'running' || !parked || cancelled) {
          problems.push('a quiet step reported with nothing parked, or in a cancelled turn');
          break;
        }
        effects.push(`log turn/suspended at step ${(e.quiet as { stepIndex: number }).stepIndex}`);
        nextRequest = (e.quiet as { stepIndex: number }).stepIndex + 1;
        for (const t of waiting) effects.push(`steer "${t}" @${nextRequest}`);
        waiting = [];
        effects.push('stop the turn'); // nothing of it lives on in this process (§9.4)
        phase = 'over';
        outcome = 'suspended';
        break;
      case 'TURN.ENDED':
        if (phase !== 'running') problems.push('the turn machine ends before it ran');
        if (cancelled && e.outcome !== 'cancelled') problems.push(`a cancelled turn ends ${String(e.outcome)}`);
        over(String(e.outcome));
        break;
      case 'TURN.FAILED':
        if (phase !== 'running') problems.push('the turn machine crashes before it ran');
        over('failed');
        break;
      default:
        problems.push(`the SPEC oracle does not know what ${e.type} means for a turn's life: teach it in turnLifecycle.oracle.ts`);
    }
  }
  if (phase !== 'over') problems.push('the path ends before the turn is over by SPEC');
  return { effects, outcome, problems };
}
