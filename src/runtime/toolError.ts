import { ErrorCode, errorNameFor, type ToolErrorInfo } from '../protocol/index.js';

/** Throw this from a tool body (or a wrapper) to fail with a stable code instead of `TOOL_FAILED`. */
export class ToolError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.code = code;
    this.name = errorNameFor(code);
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
