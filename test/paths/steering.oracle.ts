/**
 * What SPEC says steering does, given what happened along a path: the caller sends messages, the
 * turn makes a model request, suspends, or can make no more requests.
 *
 * Written from SPEC §9.2 (a message waits for the turn's next model request and enters that
 * prompt, logged `user/steer`; one the turn can no longer deliver is never dropped: it becomes a
 * follow-up turn of its own; several waiting together make one turn, README) and §9.4 with issue 22
 * (a suspended turn goes on after its resume, so a message belongs to the request after the
 * suspended step, and the log carries it there), never from `machines/steering.ts`.
 */
import type { AnyEventObject } from 'xstate';

export interface SteeringVerdict {
  /** What the world sees, in order: `steer "m" @<step>` (a `user/steer`), `follow-up "m1" + "m2"` (one turn). */
  readonly effects: readonly string[];
  /** Messages sent and not accounted for by an effect when the path ends (SPEC: none is lost). */
  readonly lost: readonly string[];
  readonly problems: readonly string[];
}

export function judgeSteering(events: readonly AnyEventObject[]): SteeringVerdict {
  const effects: string[] = [];
  const problems: string[] = [];
  let phase: 'running' | 'suspended' | 'closed' = 'running';
  let waiting: string[] = [];
  let nextRequest: number | undefined;
  for (const e of events) {
    switch (e.type) {
      case 'STEER': {
        const text = (e.steer as { text: string }).text;
        if (phase === 'running') waiting.push(text);
        else if (phase === 'suspended') effects.push(`steer "${text}" @${nextRequest}`);
        else effects.push(`follow-up "${text}"`); // the turn ended: a turn of its own, at once
        break;
      }
      case 'REQUEST':
        if (phase !== 'running') problems.push(`a model request of a turn that is ${phase}`);
        for (const t of waiting) effects.push(`steer "${t}" @${e.stepIndex}`);
        waiting = [];
        break;
      case 'SUSPENDED':
        if (phase !== 'running') problems.push(`a turn that is ${phase} suspends`);
        phase = 'suspended';
        nextRequest = (e.stepIndex as number) + 1; // the step after the suspended one asks the model next
        for (const t of waiting) effects.push(`steer "${t}" @${nextRequest}`);
        waiting = [];
        break;
      case 'CLOSED':
        if (phase !== 'running') problems.push(`a turn that is ${phase} closes`);
        phase = 'closed';
        if (waiting.length) effects.push(`follow-up ${waiting.map((t) => `"${t}"`).join(' + ')}`);
        waiting = [];
        break;
      case 'FOLLOWED_UP':
        break; // the follow-up turn was made: nothing new for the world
      default:
        problems.push(`the SPEC oracle does not know what ${e.type} means for steering: teach it in steering.oracle.ts`);
    }
  }
  return { effects, lost: waiting, problems };
}
