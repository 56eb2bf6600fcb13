/**
 * The turn lifecycle as a graph: the real `turnLifecycleMachine` with a recording port (its
 * children, the steering machine, the `makeRoom` promise and the invoked `turn` run, are created but
 * never started; what the run reports is an event of the graph), one dimension (does the runtime
 * make room before a turn?), and an event generator for what the session, the caller and the turn
 * can do: the turn's place in the queue comes (or comes while the session is suspended), the caller
 * cancels or steers, room is made (or making it failed), a call parks on a `suspend` answer or
 * stops being parked, the step is quiet, the turn machine ends (completed, failed, max-steps;
 * cancelled after a cancel) or crashes.
 */
import { getNextTransitions, type AnyEventObject, type AnyMachineSnapshot } from 'xstate';
import { turnLifecycleMachine, type QuietStep, type TurnLifecycleInput } from '../../machines/turnLifecycle.js';
import { recordingSteeringInput } from './steering.model.js';
import { enumerateConfigs, exploreGraph, planPaths, type Dimensions, type GraphModel, type Plan } from '../../src/testing/paths/planner.js';

export interface LifecycleConfig {
  /** The runtime has a context window: room is made before each turn. */
  readonly makesRoom: boolean;
}
export const lifecycleDims: Dimensions<LifecycleConfig> = { makesRoom: [false, true] };

export const QUIET: QuietStep = { stepIndex: 0, finishReason: 'tool-calls', calls: [{ callId: 'c1', callSeq: 3 }], held: [] };

/** What the lifecycle's port was asked to do, one line each (see `turnLifecycle.scenario.ts`). */
export interface LifecycleWorld {
  readonly effects: string[];
  /** The running turn's report function (what its invoked `turn` actor sends back). */
  report?: (e: AnyEventObject) => void;
  room?: { resolve(): void; reject(e: unknown): void };
}

export function lifecycleInput(config: LifecycleConfig, world: LifecycleWorld = { effects: [] }): TurnLifecycleInput {
  const { effects } = world;
  let ended = false;
  return {
    turnId: 'turn-1',
    port: {
      get makesRoom() {
        return config.makesRoom;
      },
      makeRoom: () =>
        new Promise<void>((resolve, reject) => {
          effects.push('make room');
          world.room = { resolve, reject };
        }),
      run(cancel, report) {
        effects.push(cancel ? 'run the turn, cancelled' : 'run the turn');
        world.report = (e) => {
          if (e.type === 'TURN.ENDED' || e.type === 'TURN.FAILED') ended = true;
          report(e as never);
        };
        return {
          cancel: () => effects.push('cancel the turn'),
          // Stopping a turn machine that has ended is nothing: only a live one counts.
          stop: () => {
            if (!ended) effects.push('stop the turn');
          },
        };
      },
      suspend: (quiet) => effects.push(`log turn/suspended at step ${quiet.stepIndex}`),
      steering: recordingSteeringInput(effects).port,
    },
  };
}

interface Ctx {
  cancel?: unknown;
}

export function lifecycleEvents(s: AnyMachineSnapshot): AnyEventObject[] {
  const cancelled = (s.context as Ctx).cancel !== undefined;
  const steer = { type: 'STEER', steer: { id: 1, text: 'm1' } };
  const ended = (outcome: string) => ({ type: 'TURN.ENDED', outcome });
  let events: AnyEventObject[] = [];
  if (s.matches('queued')) events = [{ type: 'BEGIN' }, { type: 'DROP', reason: 'the session has a suspended turn' }, ...(cancelled ? [] : [{ type: 'CANCEL', reason: 'user pressed stop' }]), steer];
  else if (s.matches('preparing')) events = [{ type: 'xstate.done.actor.makeRoom' }, { type: 'xstate.error.actor.makeRoom', error: new Error('summariser down') }, ...(cancelled ? [] : [{ type: 'CANCEL', reason: 'user pressed stop' }])];
  else if (s.matches({ live: 'running' })) events = [{ type: 'CANCEL', reason: 'user pressed stop' }, { type: 'PARKED' }, ended('completed'), ended('max-steps'), ended('failed'), { type: 'TURN.FAILED', error: 'step crashed' }, steer];
  else if (s.matches({ live: 'suspending' })) events = [{ type: 'QUIET', quiet: QUIET }, { type: 'UNPARKED' }, { type: 'CANCEL', reason: 'user pressed stop' }, ended('failed'), { type: 'TURN.FAILED', error: 'step crashed' }];
  else if (s.matches({ live: 'cancelling' })) events = [ended('cancelled'), { type: 'TURN.FAILED', error: 'step crashed' }];
  else if (s.matches('suspended') || s.matches('ended')) events = [steer];
  return events.filter((e) => getNextTransitions(s).some((t) => t.eventType === e.type));
}

export function serializeLifecycle(s: AnyMachineSnapshot): string {
  const c = s.context as { cancel?: unknown; outcome?: string; suspendedAt?: number };
  return `${JSON.stringify(s.value)}${c.cancel ? ' cancel' : ''}${c.outcome ? ` ${c.outcome}` : ''}${c.suspendedAt !== undefined ? ` at=${c.suspendedAt}` : ''}`;
}

export function describeLifecycleEvent(e: AnyEventObject): string {
  if (e.type === 'TURN.ENDED') return `TURN.ENDED(${e.outcome})`;
  if (e.type === 'xstate.done.actor.makeRoom') return 'room made';
  if (e.type === 'xstate.error.actor.makeRoom') return 'making room failed';
  return e.type;
}

/** Where a path ends: the turn ended, or is suspended (this process lets go of it). */
export const lifecycleEnds = (s: AnyMachineSnapshot) => s.matches('ended') || s.matches('suspended');

export const lifecycleGraph: GraphModel<LifecycleConfig> = {
  machine: turnLifecycleMachine,
  input: (config) => lifecycleInput(config),
  events: (s) => lifecycleEvents(s),
  serialize: serializeLifecycle,
  describe: describeLifecycleEvent,
};

let cached: Plan<LifecycleConfig> | undefined;

/** Shortest paths of the lifecycle to every state and through every edge, under both configurations. */
export function planLifecyclePaths(): Plan<LifecycleConfig> {
  cached ??= planPaths(lifecycleGraph, enumerateConfigs(lifecycleDims, (c) => exploreGraph(lifecycleGraph, c)), { isEnd: lifecycleEnds, simplePathsFor: () => false });
  return cached;
}
