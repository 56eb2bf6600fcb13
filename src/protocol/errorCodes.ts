import * as z from 'zod';

/** Stable, machine-routable error codes (SPEC §6). Adding one is fine; renaming one is breaking. */
export const ErrorCode = {
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  INVALID_ARGS: 'INVALID_ARGS',
  POLICY_DENIED: 'POLICY_DENIED',
  APPROVAL_DENIED: 'APPROVAL_DENIED',
  GUARD_DENIED: 'GUARD_DENIED',
  HOOK_FAILED: 'HOOK_FAILED',
  TOOL_FAILED: 'TOOL_FAILED',
  TIMEOUT: 'TIMEOUT',
  ABORTED: 'ABORTED',
  ABORTED_BEFORE_DISPATCH: 'ABORTED_BEFORE_DISPATCH',
  POST_EXECUTE_BLOCKED: 'POST_EXECUTE_BLOCKED',
  INVALID_OUTPUT: 'INVALID_OUTPUT',
  FS_STALE_VERSION: 'FS_STALE_VERSION',
  FS_OUTSIDE_WORKSPACE: 'FS_OUTSIDE_WORKSPACE',
  FS_NOT_FOUND: 'FS_NOT_FOUND',
  INTERRUPTED: 'INTERRUPTED',
  TRUNCATED_CALL: 'TRUNCATED_CALL',
  /** Two calls of one step share a callId: the later one does not run. */
  DUPLICATE_CALL_ID: 'DUPLICATE_CALL_ID',
  /** A file tool refused to change what governs the agent (`.dsh/`, dsh config, `.git`). */
  FS_PROTECTED: 'FS_PROTECTED',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The stable error codes as a zod enum, for validating a code read back from a log (SPEC §6). */
export const ErrorCodeSchema = z.enum(Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]]);

/** Error names by code: `error.name` in a result is derived from its code. */
export function errorNameFor(code: ErrorCode): string {
  return code
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('')
    .concat('Error');
}
