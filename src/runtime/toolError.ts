import { ErrorCode, errorNameFor, type ToolErrorInfo } from '../protocol/index.js';

/** What a failed call may still report: the model-facing text and result metadata (e.g. partial output). */
export interface ToolErrorDetails {
  /** Replaces the default `CODE: message` content of the error result. */
  readonly content?: string;
  /** Becomes the error result's metadata. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** Throw this from a tool body (or a wrapper) to fail with a stable code instead of `TOOL_FAILED`. */
export class ToolError extends Error {
  readonly code: ErrorCode;
  readonly details: ToolErrorDetails | undefined;
  constructor(code: ErrorCode, message: string, details?: ToolErrorDetails) {
    super(message);
    this.code = code;
    this.name = errorNameFor(code);
    this.details = details;
  }
  toInfo(): ToolErrorInfo {
    return { name: this.name, code: this.code, message: this.message };
  }
}

/** Maps anything thrown to the error info of a result; non-ToolErrors become `fallback`. */
export function toErrorInfo(thrown: unknown, fallback: ErrorCode = ErrorCode.TOOL_FAILED): ToolErrorInfo {
  if (thrown instanceof ToolError) return thrown.toInfo();
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return { name: errorNameFor(fallback), code: fallback, message };
}
