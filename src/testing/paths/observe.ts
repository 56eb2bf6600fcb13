/**
 * What a run against the real runtime actually did, from XState's inspection events
 * (`createRuntime(...).startTurn({ inspect })`, `createActor(..., { inspect })` or
 * `actor.system.inspect(...)`): per actor, every microstep with the transitions it took.
 */
import { StateMachine, type AnyActorRef, type AnyMachineSnapshot, type AnyStateMachine, type AnyTransitionDefinition, type InspectionEvent, type StateValue } from 'xstate';
import type { Microstep } from './modelScope.js';

export interface ObservedActor {
  /** Order of first appearance in the run. */
  readonly index: number;
  readonly ref: AnyActorRef;
  /** The machine the actor runs, if it is a state machine. */
  readonly machine: AnyStateMachine | undefined;
  readonly microsteps: Microstep[];
  /** State node ids seen in snapshots (`@xstate.snapshot`) besides those of microsteps. */
  readonly snapshotNodes: Set<string>;
}

export class Recorder {
  private readonly actors = new Map<AnyActorRef, ObservedActor>();

  /** Pass as `inspect`. */
  readonly inspect = (e: InspectionEvent): void => {
    const actor = this.actorOf(e.actorRef as AnyActorRef);
    if (e.type === '@xstate.microstep') {
      actor.microsteps.push({ event: e.event, snapshot: e.snapshot as AnyMachineSnapshot, transitions: e._transitions as AnyTransitionDefinition[] });
    } else if (e.type === '@xstate.snapshot') {
      const nodes = (e.snapshot as Partial<AnyMachineSnapshot>)._nodes;
      if (Array.isArray(nodes)) for (const n of nodes) actor.snapshotNodes.add(n.id);
    }
  };

  private actorOf(ref: AnyActorRef): ObservedActor {
    let a = this.actors.get(ref);
    if (!a) {
      const logic = (ref as unknown as { logic?: unknown }).logic;
      a = { index: this.actors.size, ref, machine: logic instanceof StateMachine ? (logic as AnyStateMachine) : undefined, microsteps: [], snapshotNodes: new Set() };
      this.actors.set(ref, a);
    }
    return a;
  }

  /** Every actor seen, in order of appearance. */
  all(): ObservedActor[] {
    return [...this.actors.values()];
  }

  /** The actors running `machine` (matched by identity, else by machine id), in order of appearance. */
  of(machine: AnyStateMachine): ObservedActor[] {
    return this.all().filter((a) => a.machine === machine || (a.machine !== undefined && a.machine.id === machine.id));
  }
}

/** A microstep as compared in assertions: the event type, the transitions taken and the resulting value. */
export interface StepTrace {
  readonly event: string;
  readonly via: readonly string[];
  readonly value: StateValue;
}

/** `PRE.DECIDED → {"executing":"running"}` style traces, with transitions as `source|event|index` keys. */
export function traceOf(microsteps: readonly Microstep[], keyOf: (t: AnyTransitionDefinition) => string | undefined): StepTrace[] {
  return microsteps.map((m) => ({
    event: m.event.type,
    via: m.transitions.map((t) => keyOf(t) ?? `?${t.source.id}|${t.eventType}`),
    value: m.snapshot.value,
  }));
}
