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

/**
 * The actor an inspection event is about: a full actor ref, with its `systemId` (`turn` for a turn,
 * `call` for a lone `runCall`; undefined for the step, scheduler and call actors under a turn, which
 * come and go with each step: find them by id, `step` / `scheduler` / `call-<index>`). XState emits `@xstate.actor`
 * before the actor has its systemId and first snapshot: read those from its later events.
 */
export type InspectedActorRef = AnyActorRef & { readonly systemId?: string };

type WithActor<E> = Omit<E, 'actorRef'> & { readonly actorRef: InspectedActorRef };

/** An XState inspection event with `actorRef` (and an event's `sourceRef`) typed as full actor refs. */
export type DshInspectionEvent =
  | WithActor<InspectedSnapshotEvent>
  | (Omit<WithActor<InspectedEventEvent>, 'sourceRef'> & { readonly sourceRef: InspectedActorRef | undefined })
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

/** A turn actor's snapshot. */
export type TurnSnapshot = SnapshotFrom<typeof turnMachine>;
/** A step actor's snapshot. */
export type StepSnapshot = SnapshotFrom<typeof stepMachine>;
/** A scheduler actor's snapshot. */
export type SchedulerSnapshot = SnapshotFrom<typeof schedulerMachine>;
/** A call actor's snapshot. */
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

/** The call a call actor runs, as its stage events name it. */
export interface ActorCall {
  readonly callId: string;
  readonly toolName: string;
  /** The actor's id is `call-<index>`. */
  readonly index: number;
  readonly turnId?: string;
  readonly stepIndex?: number;
}

/** The input a call actor was created with (readable from `@xstate.actor` on, before its first snapshot). */
function callInputOf(actor: object): Pick<ToolCallSnapshot['context'], 'request' | 'where'> | undefined {
  const a = actor as { logic?: { id?: unknown }; options?: { input?: { request?: { callId?: unknown; toolName?: unknown }; where?: { index?: unknown } } } };
  const input = a.logic?.id === 'toolCall' ? a.options?.input : undefined;
  if (typeof input?.request?.callId !== 'string' || typeof input.request.toolName !== 'string' || typeof input.where?.index !== 'number') return undefined;
  return input as Pick<ToolCallSnapshot['context'], 'request' | 'where'>;
}

/** An actor's snapshot, or undefined while it initializes (XState throws then: at `@xstate.actor`). */
function snapshotOf(actor: Pick<AnyActorRef, 'getSnapshot'>): Snapshot<unknown> | undefined {
  try {
    return actor.getSnapshot() as Snapshot<unknown>;
  } catch {
    return undefined;
  }
}

/**
 * Which call an actor runs: the request it was created with (its input, readable from
 * `@xstate.actor` on), else the request in its context; undefined for any other actor. Never throws.
 */
export function callOfActor(actor: Pick<AnyActorRef, 'getSnapshot'>): ActorCall | undefined {
  let found = callInputOf(actor);
  if (!found) {
    const s = snapshotOf(actor);
    found = isToolCallSnapshot(s) ? s.context : undefined;
  }
  if (!found) return undefined;
  const { request, where } = found;
  return {
    callId: request.callId,
    toolName: request.toolName,
    index: where.index,
    ...(where.turnId !== undefined ? { turnId: where.turnId } : {}),
    ...(where.stepIndex !== undefined ? { stepIndex: where.stepIndex } : {}),
  };
}
