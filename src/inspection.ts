/**
 * `dsh/inspection`: watch a runtime work. Stage events (one `stage/entered` and one `stage/exited`
 * per pipeline stage of each call), XState's inspection events typed for dsh's actors, and the
 * options that send them to Stately's inspector. Browser-safe. Pass a listener as
 * `createRuntime({ inspect })` or to `runtime.onStage`.
 *
 * @example
 * ```ts
 * import { createRuntime } from 'dsh';
 * import type { CallStageEvent } from 'dsh/inspection';
 *
 * const seen: CallStageEvent[] = [];
 * const rt = createRuntime({ tools: [] });
 * rt.onStage((event) => seen.push(event));
 * ```
 *
 * @packageDocumentation
 */
export { CALL_STAGE_NAMES, type CallStageName } from '../machines/callStageNames.js';
export type { CallStageEvent, StageEnteredEvent, StageExitedEvent, StageEventCall, StageListener, StageOutcome, StageOutcomeKinds } from './runtime/inspection/stageEvents.js';
export {
  combineInspect,
  typedInspectionEvent,
  callOfActor,
  isTurnSnapshot,
  isStepSnapshot,
  isSchedulerSnapshot,
  isToolCallSnapshot,
  type InspectOption,
  type DshInspectionEvent,
  type InspectedActorRef,
  type ActorCall,
  type TurnSnapshot,
  type StepSnapshot,
  type SchedulerSnapshot,
  type ToolCallSnapshot,
} from './runtime/inspection/inspectionEvents.js';
export { statelyInspectorOptions } from './runtime/inspection/inspectorPayload.js';
