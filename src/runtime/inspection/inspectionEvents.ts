/**
 * XState inspection events, typed as dsh delivers them. XState declares an event's `actorRef` as
 * `ActorRefLike` (no `id`, no `system`), although it always passes the actor itself; dsh's
 * `inspect` options are typed with the full actor ref, and the guards below narrow a snapshot to
 * the machine it belongs to, so a listener needs no casts. Browser-safe.
 */
import type {
  AnyActorRef,
  InspectedActionEvent,
  InspectedActorEvent,
  InspectedEventEvent,
  InspectedMicrostepEvent,
  InspectedSnapshotEvent,
  InspectedTransitionEvent,
  InspectionEvent,
  Observer,
  Snapshot,
  SnapshotFrom,
} from 'xstate';
import type { schedulerMachine } from '../../../machines/scheduler.js';
import type { stepMachine } from '../../../machines/step.js';
import type { toolCallMachine } from '../../../machines/toolCall.js';
import type { turnMachine } from '../../../machines/turn.js';

type WithActor<E> = Omit<E, 'actorRef'> & { readonly actorRef: AnyActorRef };

/** An XState inspection event with `actorRef` (and an event's `sourceRef`) typed as full actor refs. */
export type DshInspectionEvent =
  | WithActor<InspectedSnapshotEvent>
  | (Omit<WithActor<InspectedEventEvent>, 'sourceRef'> & { readonly sourceRef: AnyActorRef | undefined })
  | WithActor<InspectedActorEvent>
  | WithActor<InspectedTransitionEvent>
  | WithActor<InspectedMicrostepEvent>
  | WithActor<InspectedActionEvent>;

/** What `inspect` options take: a listener or an observer (e.g. `@statelyai/inspect`'s `inspector.inspect`). */
export type InspectOption = ((event: DshInspectionEvent) => void) | Observer<DshInspectionEvent>;

/** The same event, typed (XState passes full actor refs; only its declarations say less). */
export const typedInspectionEvent = (event: InspectionEvent): DshInspectionEvent => event as DshInspectionEvent;

/** One `inspect` option feeding several (undefined ones are dropped); undefined when none is left. */
export function combineInspect(...options: ReadonlyArray<InspectOption | undefined>): InspectOption | undefined {
  const given = options.filter((o): o is InspectOption => o !== undefined);
  if (given.length <= 1) return given[0];
  return (event: DshInspectionEvent) => {
    for (const o of given) {
      if (typeof o === 'function') o(event);
      else o.next?.(event);
    }
  };
}

/** XState's own type for an `inspect` option (dsh's is the same, with typed actor refs). */
export const toXStateInspect = (option: InspectOption | undefined) =>
  option as ((event: InspectionEvent) => void) | Observer<InspectionEvent> | undefined;

export type TurnSnapshot = SnapshotFrom<typeof turnMachine>;
export type StepSnapshot = SnapshotFrom<typeof stepMachine>;
export type SchedulerSnapshot = SnapshotFrom<typeof schedulerMachine>;
export type ToolCallSnapshot = SnapshotFrom<typeof toolCallMachine>;

const machineIdOf = (snapshot: Snapshot<unknown> | undefined): unknown =>
  (snapshot as { machine?: { id?: unknown } } | undefined)?.machine?.id;

/** A turn actor's snapshot (machines/turn.ts). */
export const isTurnSnapshot = (s: Snapshot<unknown> | undefined): s is TurnSnapshot => machineIdOf(s) === 'turn';
/** A step actor's snapshot (machines/step.ts). */
export const isStepSnapshot = (s: Snapshot<unknown> | undefined): s is StepSnapshot => machineIdOf(s) === 'step';
/** A scheduler actor's snapshot (machines/scheduler.ts). */
export const isSchedulerSnapshot = (s: Snapshot<unknown> | undefined): s is SchedulerSnapshot => machineIdOf(s) === 'scheduler';
/** A call actor's snapshot (machines/toolCall.ts): its context carries the request, so the call id. */
export const isToolCallSnapshot = (s: Snapshot<unknown> | undefined): s is ToolCallSnapshot => machineIdOf(s) === 'toolCall';

/** Which call an actor runs: read from its context (the request it was given), for a call actor; else undefined. */
export function callOfActor(actor: Pick<AnyActorRef, 'getSnapshot'>): { callId: string; toolName: string; index: number; turnId?: string; stepIndex?: number } | undefined {
  const s = actor.getSnapshot() as Snapshot<unknown>;
  if (!isToolCallSnapshot(s)) return undefined;
  const { request, where } = s.context;
  return {
    callId: request.callId,
    toolName: request.toolName,
    index: where.index,
    ...(where.turnId !== undefined ? { turnId: where.turnId } : {}),
    ...(where.stepIndex !== undefined ? { stepIndex: where.stepIndex } : {}),
  };
}
