import { ErrorCode, errorNameFor, thrownMessage, type ToolErrorInfo } from '../protocol/index.js';

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
  /** The error as a result's `error` (name, code, message). */
  toInfo(): ToolErrorInfo {
    return { name: this.name, code: this.code, message: this.message };
  }
}

/** The error info of a result with this code. */
export function errorInfo(code: ErrorCode, message: string): ToolErrorInfo {
  return { name: errorNameFor(code), code, message };
}

/** Maps anything thrown to the error info of a result; non-ToolErrors become `fallback`. */
export function toErrorInfo(thrown: unknown, fallback: ErrorCode = ErrorCode.TOOL_FAILED): ToolErrorInfo {
  const own = toolErrorInfo(thrown);
  if (own) return own;
  return { name: errorNameFor(fallback), code: fallback, message: thrownMessage(thrown) };
}

/**
 * The info of a thrown ToolError, or undefined for anything else. Never throws: a subclass with
 * a hostile getter, or a Proxy whose prototype trap throws, is described like any other value.
 */
export function toolErrorInfo(thrown: unknown): ToolErrorInfo | undefined {
  try {
    if (!(thrown instanceof ToolError)) return undefined;
    const { name, code, message } = thrown.toInfo();
    if (typeof name === 'string' && typeof code === 'string' && typeof message === 'string') return { name, code, message };
  } catch {
    // falls through: described below
  }
  return undefined;
}
