/**
 * A result in the making: the body's value checked against the tool's output schema, and its
 * model-facing content (`toContent`), or the content and parts a body brought along (`toolOutput`).
 * Post-execute listeners rewrite drafts through the same checks.
 */
import type { PreparedCall, Settlement } from '../../../machines/callStages.js';
import { describeThrown, ErrorCode, type ContentPart } from '../../protocol/index.js';
import type { AnyTool } from '../defineTool.js';
import { errorInfo } from '../toolError.js';
import { toolOf } from './prepare.js';

const BRAND = Symbol.for('dsh.toolOutput');

/**
 * What a body returns when it knows its model-facing text and typed parts better than `toContent`
 * (e.g. a tool served over MCP, whose server already split its result into text, images and a
 * structured value). The pipeline unwraps it: `value` is checked against the output schema and
 * becomes the result's value; `content` replaces `toContent(value)`; `parts` follow the content.
 */
export interface ToolOutput {
  /** Marks a value `toolOutput` made (a lookalike without it, or not frozen, is a plain value). */
  readonly [BRAND]: true;
  /** The result's value, checked against the tool's output schema. */
  readonly value: unknown;
  /** What the model reads, in place of `toContent(value)`. */
  readonly content: string;
  /** Typed parts (images, resources) that follow the content; absent when there are none. */
  readonly parts?: readonly ContentPart[];
}

/** Wraps a body's result with its own content and typed parts (see ToolOutput). */
export function toolOutput(o: { value: unknown; content: string; parts?: readonly ContentPart[] }): ToolOutput {
  return Object.freeze({ [BRAND]: true as const, value: o.value, content: o.content, ...(o.parts?.length ? { parts: Object.freeze([...o.parts]) } : {}) });
}

/** True for a value made by `toolOutput` (a plain object lookalike from elsewhere is not one). */
export function isToolOutput(v: unknown): v is ToolOutput {
  return v !== null && typeof v === 'object' && (v as Record<symbol, unknown>)[BRAND] === true && Object.isFrozen(v);
}

/** The tool's content for a value; throws when `toContent` throws or gives no string. */
export function contentOf(tool: AnyTool, value: unknown): string {
  const content: unknown = tool.toContent(value);
  if (typeof content !== 'string') throw new TypeError(`returned ${content === null ? 'null' : typeof content}, not a string`);
  return content;
}

/** The value as the tool's output schema parses it, or why it does not fit. */
export function validateOutput(tool: AnyTool, value: unknown): { ok: true; value: unknown } | { ok: false; message: string } {
  if (!tool.output) return { ok: true, value };
  let parsed: ReturnType<NonNullable<AnyTool['output']>['safeParse']>;
  try {
    parsed = tool.output.safeParse(value);
  } catch (e) {
    // A schema whose own check throws (a buggy refine, a hostile getter) cannot vouch for the value.
    return { ok: false, message: `output of "${tool.name}" could not be checked against its output schema: ${describeThrown(e)}` };
  }
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues
    .slice(0, 5)
    .map((i: { path: PropertyKey[]; message: string }) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`)
    .join('; ');
  return { ok: false, message: `output of "${tool.name}" does not match its output schema: ${issues}` };
}

/** The first draft from the body's value; an output-schema failure gives INVALID_OUTPUT. */
export function draftFromValue(p: PreparedCall, returned: unknown): Settlement {
  const tool = toolOf(p);
  // A body that already split its result (toolOutput, above) brings its own content and parts.
  const own = isToolOutput(returned) ? returned : undefined;
  const value = own ? own.value : returned;
  const checked = validateOutput(tool, value);
  if (!checked.ok) return { ok: false, error: errorInfo(ErrorCode.INVALID_OUTPUT, checked.message) };
  let content: string;
  try {
    content = own ? own.content : contentOf(tool, checked.value);
  } catch (e) {
    return { ok: false, error: errorInfo(ErrorCode.TOOL_FAILED, `toContent of "${tool.name}" failed: ${describeThrown(e)}`) };
  }
  try {
    const parts = own?.parts ? { parts: own.parts } : {};
    return { ok: true, draft: { value: checked.value, content, metadata: metadataOf(tool, checked.value), ...parts } };
  } catch (e) {
    return { ok: false, error: errorInfo(ErrorCode.TOOL_FAILED, `toMetadata of "${tool.name}" failed: ${describeThrown(e)}`) };
  }
}

/** The tool's result metadata for a value (`toMetadata`); throws when it throws or gives no plain object. */
function metadataOf(tool: AnyTool, value: unknown): Record<string, unknown> {
  if (!tool.toMetadata) return {};
  const m: unknown = tool.toMetadata(value);
  if (m === null || typeof m !== 'object' || Array.isArray(m)) throw new TypeError(`returned ${m === null ? 'null' : Array.isArray(m) ? 'an array' : typeof m}, not an object`);
  return { ...(m as Record<string, unknown>) };
}
