/**
 * The one place that turns XState inspection into the inspector's live actor states: which turn,
 * step or call an `@xstate.snapshot` is about, and the state it is in, named as the generated
 * diagrams name it (a nested value `{ a: 'b' }` as `a_b`; see scripts/viz).
 *
 * Calls are matched by the request's callId in the call actor's context, never by the actor id
 * (`call-<index>` ids are reused across steps). Synchronous stages (validating, guard, …) pass
 * inside one macrostep and so never show as snapshots here: the runtime's stage stream
 * (`callStateOfStage`) shows them; their durations come from the result's `metadata.durationsMs`.
 */
import type { InspectionEvent } from 'xstate';
import { stateValuePath, type CallStageEvent } from '../../runtime/inspection/index.js';
import { stepSnapshotOf, toolCallSnapshotOf, turnSnapshotOf } from '../../../machines/snapshotSelectors.js';

export type ActorKind = 'turn' | 'step' | 'call';

export interface ActorState {
  kind: ActorKind;
  /** turn: the turnId; step: `<turnId>/<stepIndex>`; call: the callId. */
  key: string;
  /** The state as the diagrams name it (`executing`, `preExecuteWaiting`, a nested `a_b`), or `settled`/`done`. */
  state: string;
  /** ms since the epoch (the inspector's wall clock) when it was seen. */
  time: number;
}

/** `'executing'` → `executing`, `{ a: 'b' }` → `a_b`; parallel states: the first region. */
export function diagramStateOf(value: unknown): string {
  return stateValuePath(value).join('_');
}

const stepKey = (turnId: string, stepIndex: number) => `${turnId}/${stepIndex}`;
export { stepKey };

/** The actor state an inspection event shows, if it is a snapshot of a turn, step or call actor. */
export function actorStateOf(ev: InspectionEvent, now: number): ActorState | undefined {
  if (ev.type !== '@xstate.snapshot') return undefined;
  const found = actorOf(ev.snapshot);
  const state = found && diagramStateOf(found.value);
  return found && state ? { kind: found.kind, key: found.key, state, time: now } : undefined;
}

function actorOf(snapshot: unknown): { kind: ActorKind; key: string; value: unknown } | undefined {
  const turn = turnSnapshotOf(snapshot);
  if (turn) return { kind: 'turn', key: turn.turnId, value: turn.value };
  const step = stepSnapshotOf(snapshot);
  if (step) return { kind: 'step', key: stepKey(step.turnId, step.stepIndex), value: step.value };
  const call = toolCallSnapshotOf(snapshot);
  return call && { kind: 'call', key: call.request.callId, value: call.value };
}

/**
 * The call state a stage event shows (`runtime.onStage`): every stage a call enters, synchronous
 * ones included, named as the toolCall diagram names the stage's state.
 */
export function callStateOfStage(e: CallStageEvent, now: number): ActorState | undefined {
  return e.type === 'stage/entered' ? { kind: 'call', key: e.callId, state: e.stage, time: now } : undefined;
}
