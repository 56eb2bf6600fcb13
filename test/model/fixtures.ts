/** Handmade session logs for the projection and compaction tests. */
import { ErrorCode, errorNameFor, type ErrorCode as Code, type ToolResult } from '../../src/protocol/index.js';
import { createMemoryLog, type SessionLog } from '../../src/runtime/log/sessionLog.js';
import { ManualClock } from '../../src/runtime/clock.js';

export function newLog(): SessionLog {
  return createMemoryLog({ clock: new ManualClock(1_000) });
}

export function ok(callId: string, toolName: string, content: string): ToolResult {
  return { callId, toolName, isError: false, content, value: content, metadata: {} };
}

export function failed(callId: string, toolName: string, code: Code, content: string): ToolResult {
  return { callId, toolName, isError: true, error: { name: errorNameFor(code), code, message: content }, content, metadata: {} };
}

interface CallSpec {
  callId: string;
  toolName: string;
  input: unknown;
  result: ToolResult;
  parallel?: boolean;
}

/**
 * Appends one step: `step/start`, its text as `llm/stream` runs, every `tool/call` in array
 * order, then the results in `commitOrder` (indexes into `calls`), then `step/end`.
 * Returns the `seq` of each call's `tool/result`, by call index.
 */
export function appendStep(
  log: SessionLog,
  turnId: string,
  stepIndex: number,
  spec: { text?: string[]; calls?: CallSpec[]; commitOrder?: number[]; finishReason?: string },
): number[] {
  log.append({ type: 'step/start', turnId, stepIndex });
  for (const text of spec.text ?? []) log.append({ type: 'llm/stream', turnId, stepIndex, kind: 'text', text });
  const calls = spec.calls ?? [];
  const callSeqs = calls.map(
    (c, index) =>
      log.append({ type: 'tool/call', turnId, stepIndex, callId: c.callId, toolName: c.toolName, input: c.input, index, executionMode: c.parallel === false ? 'exclusive' : 'parallel' }).seq,
  );
  const resultSeqs: number[] = [];
  for (const i of spec.commitOrder ?? calls.map((_, i) => i)) {
    const c = calls[i]!;
    resultSeqs[i] = log.append({ type: 'tool/result', turnId, stepIndex, callId: c.callId, toolName: c.toolName, sourceEventSeqs: [callSeqs[i]!], result: c.result }).seq;
  }
  log.append({ type: 'step/end', turnId, stepIndex, finishReason: spec.finishReason ?? (calls.length ? 'tool-calls' : 'stop'), toolCalls: calls.length });
  return resultSeqs;
}

export const FILES: Record<string, string> = {
  'a.txt': 'alpha\n',
  'b.txt': 'bravo\n',
  'd.txt': 'delta\n',
};

/**
 * The SPEC §1 turn: step 0 reads four files in parallel (one missing, one with cut-off JSON
 * arguments), committed out of completion order; step 1 writes (and fails stale); step 2 answers.
 */
export function twoStepTurn(log: SessionLog, turnId = 'turn-1') {
  log.append({ type: 'turn/start', turnId, input: 'Read a, b, c and d, then write the summary.' });
  const step0 = appendStep(log, turnId, 0, {
    text: ['Reading ', 'the four files.'],
    calls: [
      { callId: 'c0', toolName: 'read', input: '{"path":"a.txt"}', result: ok('c0', 'read', FILES['a.txt']!) },
      { callId: 'c1', toolName: 'read', input: '{"path":"b.txt"}', result: ok('c1', 'read', FILES['b.txt']!) },
      { callId: 'c2', toolName: 'read', input: '{"path":"c.txt"}', result: failed('c2', 'read', ErrorCode.FS_NOT_FOUND, 'c.txt: no such file') },
      { callId: 'c3', toolName: 'read', input: '{"path":"d.t', result: failed('c3', 'read', ErrorCode.INVALID_ARGS, 'arguments are not valid JSON') },
    ],
    // The log is written in commit order; the projection must still follow the model's order.
    commitOrder: [1, 0, 3, 2],
  });
  const step1 = appendStep(log, turnId, 1, {
    text: ['Writing the summary.'],
    calls: [{ callId: 'w0', toolName: 'write', input: { path: 'summary.txt', content: 'alpha bravo delta' }, parallel: false, result: failed('w0', 'write', ErrorCode.FS_STALE_VERSION, 'summary.txt changed since it was read') }],
  });
  appendStep(log, turnId, 2, { text: ['Done: ', 'c.txt is missing.'] });
  log.append({ type: 'turn/end', turnId, outcome: 'completed', steps: 3 });
  return { step0, step1 };
}
