/**
 * `runtime.runCall`: one call outside any turn, through the same pipeline and the same call/result
 * pairing (`logCall` / `logResult`, machines/commitGate.ts) as a step's calls: its `tool/call` is
 * appended before it can run, its `tool/result` once it settled. Browser-safe.
 */
import { createActor, toPromise } from 'xstate';
import { logCall, logResult, type LogPort } from '../../machines/commitGate.js';
import type { CallStages } from '../../machines/callStages.js';
import { toolCallMachine } from '../../machines/toolCall.js';
import { describeThrown, ErrorCode, errorResult, type ToolCallRequest, type ToolResult } from '../protocol/index.js';
import type { Clock } from './clock.js';
import { combineInspect, toXStateInspect, type InspectOption } from './inspection/inspectionEvents.js';
import type { StageStream } from './inspection/stageStream.js';
import type { CallHandle, RunCallOptions } from './runtime.js';

/** The result of a call whose machine itself failed: the call still gets its `tool/result`. */
export function crashedCallResult(request: ToolCallRequest, e: unknown): ToolResult {
  return errorResult(request, { code: ErrorCode.TOOL_FAILED, message: `the call machine failed: ${describeThrown(e)}` });
}

export interface CallRunnerDeps {
  /** The runtime's stage port, and the stream its stages report to (a call's `onStage` hears its own). */
  readonly pipeline: CallStages;
  readonly stages: StageStream;
  readonly log: LogPort;
  readonly clock: Clock;
  /** The runtime's own inspection, beside each call's. */
  readonly inspect?: InspectOption;
}

/** `runCall` over the runtime's stage port and log. */
export function createCallRunner(deps: CallRunnerDeps): (request: ToolCallRequest, at?: RunCallOptions) => CallHandle {
  return (request, at = {}) => {
    const where = { index: at.index ?? 0, turnId: at.turnId, stepIndex: at.stepIndex };
    const { pipeline } = deps;
    const stopHearing = at.onStage ? deps.stages.onCall(request, at.onStage) : undefined;
    let prepared: ReturnType<CallStages['prepare']>;
    try {
      prepared = pipeline.prepare(request, where);
    } catch (e) {
      stopHearing?.();
      throw e;
    }
    const callSeq = logCall(deps.log, where, request, prepared);
    const inspect = toXStateInspect(combineInspect(deps.inspect, at.inspect));
    const actor = createActor(toolCallMachine, {
      input: { request, where, pipeline, prepared },
      clock: deps.clock,
      // The same id a call actor has under a scheduler; `systemId` finds it from any inspection event.
      id: `call-${where.index}`,
      systemId: 'call',
      ...(inspect ? { inspect } : {}),
    });
    const result = toPromise(actor)
      .catch((e: unknown): ToolResult => crashedCallResult(request, e))
      .then((r) => {
        stopHearing?.(); // its stages are over: finalizing exited before the machine's output
        logResult(deps.log, where, callSeq, r);
        return r;
      });
    actor.start();
    return { actor, result, cancel: (reason) => actor.send({ type: 'CANCEL', reason }) };
  };
}
