import * as z from 'zod';
import { DecisionProvenanceSchema } from './decisions.js';
import { ErrorCodeSchema, errorNameFor, type ErrorCode } from './errorCodes.js';

/** An error result's `error`: its class name, stable code and message (SPEC §5). */
export const ToolErrorInfoSchema = z.object({
  name: z.string(),
  code: ErrorCodeSchema,
  message: z.string(),
});
/** An error result's `error`: `name`, a stable `code` to branch on, and a `message`. */
export type ToolErrorInfo = z.infer<typeof ToolErrorInfoSchema>;

/**
 * Non-text content a result carries beside its text (images, embedded or linked resources): kept
 * typed so the model receives them as media, never as stringified base64.
 */
export const ContentPartSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('image'), data: z.string(), mediaType: z.string() }),
  z.object({ type: z.literal('audio'), data: z.string(), mediaType: z.string() }),
  z.object({
    type: z.literal('resource'),
    uri: z.string(),
    mediaType: z.string().optional(),
    /** A text resource's text, or a binary resource's base64 `data`; neither for a link. */
    text: z.string().optional(),
    data: z.string().optional(),
  }),
]);
/** A non-text part of a result (an image, audio, or a resource), passed to the model as media. */
export type ContentPart = z.infer<typeof ContentPartSchema>;

const resultFields = {
  callId: z.string(),
  toolName: z.string(),
  /** Model-facing text. */
  content: z.string(),
  /** Typed non-text parts (images, resources) that follow `content`; absent for text-only results. */
  parts: z.array(ContentPartSchema).optional(),
  /**
   * Canonical value produced by the tool body (absent for error results, and for spilled results:
   * their full text is in the spill store, at `metadata.spill.locator`).
   */
  value: z.unknown().optional(),
  metadata: z.record(z.string(), z.unknown()),
  /** The policy that denied, asked about, blocked or failed the call closed (absent when none did). */
  decision: DecisionProvenanceSchema.optional(),
};

/**
 * The materialised, frozen result of one tool call: what the log stores and the model sees.
 * `isError` tells the two kinds apart, so `if (result.isError) result.error.code` type-checks.
 */
export const ToolResultSchema = z.discriminatedUnion('isError', [
  z.object({ ...resultFields, isError: z.literal(false), error: z.undefined().optional() }),
  z.object({ ...resultFields, isError: z.literal(true), error: ToolErrorInfoSchema }),
]);
/** One call's frozen result; narrow on `isError` to read `error` (see {@link ToolResultSchema}). */
export type ToolResult = z.infer<typeof ToolResultSchema>;

/** A tool call as the model emitted it. `input` is the raw JSON text (or an already parsed value). */
export const ToolCallRequestSchema = z.object({
  callId: z.string(),
  toolName: z.string(),
  input: z.unknown(),
});
/** A tool call as the model emitted it: its id, the tool's name and the raw input. */
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
