/**
 * The steering machine as a graph: the real `steeringMachine` with a recording port, and an event
 * generator for what can happen to a turn's steering: the caller sends a message (at most two wait
 * at once), the turn makes a model request, suspends, or can make no more requests; a follow-up
 * turn, once asked for, is made (`FOLLOWED_UP`, which the running actor's invoked `followUp` sends
 * by itself, at once: nothing else happens in between).
 */
import { getNextTransitions, type AnyEventObject, type AnyMachineSnapshot } from 'xstate';
import { steeringMachine, type SteeringInput, type Steer } from '../../machines/steering.js';
import { enumerateConfigs, exploreGraph, planPaths, type Dimensions, type GraphModel, type Plan } from '../../src/testing/paths/planner.js';

export type SteeringConfig = Record<string, never>;
export const steeringDims: Dimensions<SteeringConfig> = {};

/** The step of the request a path makes, and the step a path suspends on. */
export const REQUEST_STEP = 1;
export const SUSPENDED_STEP = 0;

/** What the port was asked to do, one line each: `steer "m1" @1`, `follow-up "m1" + "m2"`. */
export function recordingSteeringInput(effects: string[] = []): SteeringInput {
  return {
    port: {
      deliver: (steers, stepIndex) => {
        for (const s of steers) effects.push(`steer "${s.text}" @${stepIndex}`);
      },
      followUp: (steers) => effects.push(`follow-up ${steers.map((s) => `"${s.text}"`).join(' + ')}`),
    },
  };
}

const held = (s: AnyMachineSnapshot) => (s.context as { steers: readonly Steer[] }).steers;

export function steeringEvents(s: AnyMachineSnapshot): AnyEventObject[] {
  if (s.matches({ closed: 'followingUp' })) return [{ type: 'FOLLOWED_UP' }];
  const n = held(s).length;
  const events: AnyEventObject[] = [
    ...(n < 2 ? [{ type: 'STEER', steer: { id: n + 1, text: `m${n + 1}` } }] : []),
    { type: 'REQUEST', stepIndex: REQUEST_STEP },
    { type: 'SUSPENDED', stepIndex: SUSPENDED_STEP },
    { type: 'CLOSED' },
  ];
  return events.filter((e) => getNextTransitions(s).some((t) => t.eventType === e.type));
}

export function serializeSteering(s: AnyMachineSnapshot): string {
  const c = s.context as { steers: readonly Steer[]; nextStep?: number };
  return `${JSON.stringify(s.value)} held=${c.steers.map((x) => x.text).join(',')}${c.nextStep !== undefined ? ` next=${c.nextStep}` : ''}`;
}

export function describeSteeringEvent(e: AnyEventObject): string {
  if (e.type === 'STEER') return `STEER(${(e.steer as Steer).text})`;
  return e.type;
}

/** Where a path may end: the turn suspended (this process lets go of it), or closed with nothing waiting. */
export const steeringEnds = (s: AnyMachineSnapshot) => s.matches('suspended') || s.matches({ closed: 'idle' });

export const steeringGraph: GraphModel<SteeringConfig> = {
  machine: steeringMachine,
  input: () => recordingSteeringInput(),
  events: (s) => steeringEvents(s),
  serialize: serializeSteering,
  describe: describeSteeringEvent,
};

let cached: Plan<SteeringConfig> | undefined;

/** Shortest and simple paths of the steering machine (a small graph). */
export function planSteeringPaths(): Plan<SteeringConfig> {
  cached ??= planPaths(steeringGraph, enumerateConfigs(steeringDims, (c) => exploreGraph(steeringGraph, c)), { isEnd: steeringEnds });
  return cached;
}
