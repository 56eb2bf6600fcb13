/**
 * The two log events that bracket every call (SPEC §1, §3): its `tool/call`, appended before the
 * call can run, and its `tool/result`, appended once it settled and every earlier call of its batch
 * was committed, naming the `tool/call` it answers. Written once, for the scheduler's batches and
 * for `runtime.runCall`'s lone calls. Browser-safe.
 */
import type { NewLogEvent, ToolCallRequest, ToolResult } from '../src/protocol/index.js';
import type { PrepareOutcome } from './callStages.js';
import { plannedMode } from './commitGate.js';

/** The part of the session log the machines need: append, get the stamped seq back. */
export interface LogPort {
  /** Appends the event and returns it stamped with its `seq`. */
  append(event: NewLogEvent): { readonly seq: number };
}

/** Where a call runs: its place in its step's batch, and the step's turn. */
export interface CallPlace {
  readonly index: number;
  readonly turnId: string | undefined;
  readonly stepIndex: number | undefined;
}

/** Appends the call's `tool/call` (with the execution mode it was planned in); returns its `seq`. */
export function logCall(log: LogPort, at: CallPlace, request: ToolCallRequest, prepared: PrepareOutcome): number {
  return log.append({
    type: 'tool/call',
    turnId: at.turnId,
    stepIndex: at.stepIndex,
    callId: request.callId,
    toolName: request.toolName,
    input: request.input,
    index: at.index,
    executionMode: plannedMode(prepared),
  }).seq;
}

/** Appends the `tool/result` answering the `tool/call` at `callSeq`. */
export function logResult(log: LogPort, at: Omit<CallPlace, 'index'>, callSeq: number, result: ToolResult): void {
  log.append({
    type: 'tool/result',
    turnId: at.turnId,
    stepIndex: at.stepIndex,
    callId: result.callId,
    toolName: result.toolName,
    sourceEventSeqs: [callSeq],
    result,
  });
}
