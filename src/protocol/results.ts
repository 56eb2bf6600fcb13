import { z } from 'zod';
import { ErrorCodeSchema, errorNameFor, type ErrorCode } from './errorCodes.js';

export const ToolErrorInfoSchema = z.object({
  name: z.string(),
  code: ErrorCodeSchema,
  message: z.string(),
});
export type ToolErrorInfo = z.infer<typeof ToolErrorInfoSchema>;

/** The materialised, frozen result of one tool call: what the log stores and the model sees. */
export const ToolResultSchema = z.object({
  callId: z.string(),
  toolName: z.string(),
  isError: z.boolean(),
  error: ToolErrorInfoSchema.optional(),
  /** Model-facing text. */
  content: z.string(),
  /**
   * Canonical value produced by the tool body (absent for error results, and for spilled results:
   * their full text is in the spill store, at `metadata.spill.locator`).
   */
  value: z.unknown().optional(),
  metadata: z.record(z.string(), z.unknown()),
});
export type ToolResult = z.infer<typeof ToolResultSchema>;

/** A tool call as the model emitted it. `input` is the raw JSON text (or an already parsed value). */
export const ToolCallRequestSchema = z.object({
  callId: z.string(),
  toolName: z.string(),
  input: z.unknown(),
});
export type ToolCallRequest = z.infer<typeof ToolCallRequestSchema>;

/** A frozen error result for a call that has no pipeline result (crashed, interrupted). */
export function errorResult(call: { callId: string; toolName: string }, error: { code: ErrorCode; message: string }): ToolResult {
  return Object.freeze({
    callId: call.callId,
    toolName: call.toolName,
    isError: true,
    error: Object.freeze({ name: errorNameFor(error.code), code: error.code, message: error.message }),
    content: `${error.code}: ${error.message}`,
    metadata: Object.freeze({}),
  });
}
