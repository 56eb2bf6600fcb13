/**
 * `dsh/machines`: the XState v5 machines alone (pure, browser-safe), with the ports they are
 * driven through. A turn runs steps; a step streams the model's answer and hands its calls to the
 * scheduler; the scheduler runs one `toolCall` actor per call, each stage a named state whose work
 * is done behind the `CallStages` port (`runtime.pipeline`). `createRuntime` wires them; use this
 * entry to drive or draw a machine yourself.
 *
 * @example
 * ```ts
 * import { createActor } from 'xstate';
 * import { toolCallMachine } from 'dsh/machines';
 *
 * const rt = createRuntime({ tools: [read] });
 * const call = createActor(toolCallMachine, { input: { request, where: { index: 0 }, pipeline: rt.pipeline } }).start();
 * ```
 *
 * @packageDocumentation
 */

// The machines.
export { turnMachine, type TurnContext, type TurnInput, type TurnOutput, type TurnEvent } from './turn.js';
export { stepMachine, MAX_REQUEST_ATTEMPTS, type StepContext, type StepInput, type StepOutput, type StepEvent, type StepDeps, type RequestErrorDecision } from './step.js';
export { schedulerMachine, callsOf, callActorId, type SchedulerContext, type SchedulerInput, type SchedulerOutput, type SchedulerEvent, type StepCall } from './scheduler.js';
export { toolCallMachine, type ToolCallContext, type ToolCallInput, type ToolCallMachine, type ToolCallMachineEvent, type Verdict } from './toolCall.js';
export { turnLifecycleMachine, type TurnLifecycleContext, type TurnLifecycleInput, type TurnLifecycleEvent, type TurnLifecyclePort, type TurnRun, type TurnRunReport, type LifecycleOutcome, type QuietStep } from './turnLifecycle.js';
export { steeringMachine, type SteeringContext, type SteeringInput, type SteeringEvent, type SteeringPort, type Steer } from './steering.js';

// Reading snapshots: the stages in order, and typed selectors of a turn's children.
export { CALL_STAGE_NAMES, type CallStageName } from './callStageNames.js';
export { turnSnapshotOf, stepSnapshotOf, toolCallSnapshotOf } from './snapshotSelectors.js';

// The ports the machines call: the call pipeline's stages, the log, model request settings.
export type {
  CallStages,
  CallView,
  CallWhere,
  PipelineLimits,
  PreparedCall,
  PrepareOutcome,
  PreExecuteOutcome,
  GuardOutcome,
  ExecOutcome,
  ResultDraft,
  PostExecuteOutcome,
  PostExecutePlan,
  Settlement,
  StageFailure,
  StageMarks,
  ListenerFailure,
  SyncOrAsync,
} from './callStages.js';
export type { ModelStreamInput, ModelStreamEvent } from './modelStream.js';
export type { ReadyToolCall } from './toolInputTracker.js';
export type { CommitGate, BatchEntry, EntryStatus, LogPort } from './commitGate.js';
export type { ModelCallOptions } from './modelCallOptions.js';
