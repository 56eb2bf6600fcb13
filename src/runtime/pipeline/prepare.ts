/**
 * Before stage 1 (SPEC §2): resolve the tool, parse and validate the arguments, deep-freeze them,
 * decide the execution mode (a throwing `isConcurrencySafe` fails the call with HOOK_FAILED), and
 * take the guards the call will consult.
 */
import type { CallView, CallWhere, PrepareOutcome, PreparedCall } from '../../../machines/callStages.js';
import { describeThrown, ErrorCode, type ToolCallRequest } from '../../protocol/index.js';
import { deepFreeze, parseArgs } from '../args.js';
import type { AnyTool } from '../defineTool.js';
import type { Guard, Named } from '../hooks.js';
import { errorInfo, toErrorInfo } from '../toolError.js';
import type { StageDeps } from './stageDeps.js';

/** A prepared call as the runtime makes it: its tool, and the guards registered when it started. */
export interface RuntimePreparedCall extends PreparedCall {
  readonly tool: AnyTool;
  readonly guards: ReadonlyArray<Named<Guard>>;
}

/** The tool of a prepared call. */
export const toolOf = (p: PreparedCall): AnyTool => p.tool as AnyTool;

/** The guards this call consults; a call prepared elsewhere (a test's port) gets the current ones. */
export function guardsOf(p: PreparedCall, deps: Pick<StageDeps, 'guards'>): ReadonlyArray<Named<Guard>> {
  return (p as Partial<RuntimePreparedCall>).guards ?? deps.guards.list();
}

export function prepareCall(deps: StageDeps, request: ToolCallRequest, at: CallWhere): PrepareOutcome {
  const tool = deps.tools.get(request.toolName);
  if (!tool) {
    const known = deps.tools.list().map((t) => t.name);
    return { ok: false, error: errorInfo(ErrorCode.UNKNOWN_TOOL, `unknown tool "${request.toolName}"; available: ${known.join(', ') || '(none)'}`) };
  }
  let args: unknown;
  try {
    args = parseArgs(tool, request.input, deps.argLimits);
  } catch (e) {
    return { ok: false, error: toErrorInfo(e, ErrorCode.INVALID_ARGS) };
  }
  // An already-parsed input is the very object the log records as `tool/call.input`, and
  // listeners see it as `rawInput`: frozen too, so nobody can rewrite history through it.
  deepFreeze(request.input);
  let safe: boolean;
  try {
    safe = tool.isConcurrencySafe(args) === true;
  } catch (e) {
    // A call whose own tool cannot say how it may run does not run: it fails closed, by name.
    const listener = `${tool.name}.isConcurrencySafe`;
    const message = describeThrown(e);
    return { ok: false, error: errorInfo(ErrorCode.HOOK_FAILED, `${listener} failed: ${message}`), hookFailure: { hook: 'isConcurrencySafe', listener, message } };
  }
  const view: CallView = Object.freeze({
    callId: request.callId,
    toolName: tool.name,
    args,
    rawInput: request.input,
    index: at.index,
    executionMode: safe ? 'parallel' : 'exclusive',
    idempotent: tool.idempotent,
    turnId: at.turnId,
    stepIndex: at.stepIndex,
  });
  // The guards as they are now: this call consults exactly these (the registry is append-only).
  const prepared: RuntimePreparedCall = { view, tool, guards: deps.guards.list() };
  return { ok: true, prepared };
}
