/**
 * dsh's own machines with nothing else: the scheduler machine and one toolCall actor per call,
 * exactly as a dsh step runs them, but with a stage port that does no work (a constant validated
 * call, a synchronous `allow` from the one pre-execute listener W1 registers, a body that returns
 * at once, a constant frozen result) and a log that only numbers events. The calls arrive as the
 * step hands them over from a one-burst response (one `CALL.ADD` with every request).
 *
 * What this costs per call is what the statecharts themselves cost (XState's actor per call, each
 * stage a state, the ordered commit): no validation, hooks, log, model or turn. No change to dsh's
 * pipeline code can bring W1 below it; only fewer actor operations per call can.
 */
import { createActor, toPromise } from 'xstate';
import type { CallStages, PreparedCall, ResultDraft } from '../../machines/callStages.js';
import type { LogPort } from '../../machines/commitGate.js';
import { schedulerMachine } from '../../machines/scheduler.js';
import type { ToolCallRequest, ToolResult } from '../../src/protocol/index.js';

const SKIP_POST = Object.freeze({ kind: 'skip' as const });
const ALLOW = Object.freeze({ kind: 'allow' as const });
const view = Object.freeze({ callId: 'c', toolName: 'noop', args: Object.freeze({}), rawInput: '{}', index: 0, executionMode: 'parallel' as const, idempotent: false });
const PREPARED = Object.freeze({ ok: true as const, prepared: Object.freeze({ view, tool: {} }) satisfies PreparedCall });
const RESULT = Object.freeze({ callId: 'c', toolName: 'noop', content: 'ok', isError: false }) as unknown as ToolResult;
const DRAFT: ResultDraft = Object.freeze({ value: 'ok', content: 'ok', metadata: Object.freeze({}) });
const OK = Object.freeze({ ok: true as const, value: 'ok' });

/** A stage port whose every stage answers at once with a constant. */
export const noWorkStages: CallStages = {
  limits: { hookTimeoutMs: 60_000, approvalTimeoutMs: 60_000, abortGraceMs: 1_000, callTimeoutMs: 600_000 },
  now: () => 0,
  prepare: () => PREPARED,
  hasPreExecute: () => true,
  preExecute: () => ALLOW,
  isApprovalRemembered: () => false,
  rememberApproval: () => {},
  requestApproval: () => Promise.resolve('allowed-once'),
  hasGuards: () => false,
  guard: () => undefined,
  execute: () => Promise.resolve(OK),
  draftFromValue: () => ({ ok: true, draft: DRAFT }),
  planPostExecute: () => SKIP_POST,
  postExecute: () => ({ kind: 'accepted', draft: DRAFT }),
  finalize: () => RESULT,
  record: () => {},
  isMetered: () => false,
};

/** The requests of a batch of n calls (built once per n). */
export function machineRequests(n: number): ToolCallRequest[] {
  return Array.from({ length: n }, (_, i) => ({ callId: `call-${i}`, toolName: 'noop', input: `{"i":${i}}` }));
}

/** One step's batch of calls through the scheduler and the call actors, with no work in any stage. */
export async function machinesAloneBatch(requests: readonly ToolCallRequest[]): Promise<void> {
  let seq = 0;
  const log: LogPort = { append: () => ({ seq: ++seq }) };
  const actor = createActor(schedulerMachine, { input: { pipeline: noWorkStages, log, concurrency: 8 } });
  const done = toPromise(actor);
  actor.start();
  if (requests.length) actor.send({ type: 'CALL.ADD', requests });
  actor.send({ type: 'INPUT.END', finishReason: 'tool-calls' });
  await done;
}
