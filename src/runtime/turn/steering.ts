/**
 * Steering a turn, on the world's side: the `SteeringPort` of machines/steering.ts (a message
 * delivered is a `user/steer` event; undelivered messages become one follow-up turn), and the
 * promises `handle.steer(message)` returns, settled by where each message went.
 */
import type { ActorRefFrom } from 'xstate';
import type { Steer, SteeringPort } from '../../../machines/steering.js';
import type { turnLifecycleMachine } from '../../../machines/turnLifecycle.js';
import type { SessionLog } from '../log/sessionLog.js';
import type { SteerOutcome, TurnHandle } from './types.js';

/** A message for a turn: a non-empty string (a TypeError otherwise: it is the caller's mistake). */
export function checkMessage(message: unknown, what: string): string {
  if (typeof message !== 'string' || message.trim() === '') throw new TypeError(`${what}: the message must be a non-empty string`);
  return message;
}

export interface TurnSteering {
  readonly port: SteeringPort;
  /** `handle.steer`: sends the message to the lifecycle; settles where it went. */
  steer(lifecycle: ActorRefFrom<typeof turnLifecycleMachine>, message: string): Promise<SteerOutcome>;
}

/**
 * One turn's steering. `followUp(text)` makes a late-steer follow-up turn (queued like any turn).
 * Only the messages not yet settled are kept.
 */
export function createTurnSteering(o: { log: Pick<SessionLog, 'append'>; turnId: string; followUp: (text: string) => TurnHandle }): TurnSteering {
  const settles = new Map<number, (outcome: SteerOutcome) => void>();
  let ids = 0;
  const settle = (s: Steer, outcome: SteerOutcome) => {
    settles.get(s.id)?.(outcome);
    settles.delete(s.id);
  };
  const port: SteeringPort = {
    deliver(steers, stepIndex) {
      for (const s of steers) {
        const e = o.log.append({ type: 'user/steer', turnId: o.turnId, stepIndex, text: s.text });
        settle(s, { delivered: 'steer', stepIndex, seq: e.seq });
      }
    },
    followUp(steers) {
      const turn = o.followUp(steers.map((s) => s.text).join('\n\n'));
      for (const s of steers) settle(s, { delivered: 'follow-up', turn });
    },
  };
  return {
    port,
    steer(lifecycle, message) {
      const text = checkMessage(message, 'steer');
      const steer: Steer = { id: ++ids, text };
      return new Promise<SteerOutcome>((resolve) => {
        settles.set(steer.id, resolve);
        lifecycle.send({ type: 'STEER', steer });
      });
    },
  };
}

/**
 * The step whose model request is being prepared: the turn's open step (a retried request), else
 * the one after its last closed step. (XState runs the step's `step/start` entry after it has
 * started the request, so the next step may not be in the log yet.)
 */
export function upcomingStep(log: Pick<SessionLog, 'lastSeq' | 'get'>, turnId: string): number {
  for (let seq = log.lastSeq; seq >= 1; seq--) {
    const e = log.get(seq);
    if (e === undefined || !('turnId' in e) || e.turnId !== turnId) continue;
    if (e.type === 'step/start') return e.stepIndex;
    if (e.type === 'step/end') return e.stepIndex + 1;
    if (e.type === 'turn/start') break;
  }
  return 0;
}
