import type { ContentPart } from '../protocol/index.js';

const BRAND = Symbol.for('dsh.toolOutput');

/**
 * What a body returns when it knows its model-facing text and typed parts better than `toContent`
 * (e.g. a tool served over MCP, whose server already split its result into text, images and a
 * structured value). The pipeline unwraps it: `value` is checked against the output schema and
 * becomes the result's value; `content` replaces `toContent(value)`; `parts` follow the content.
 */
export interface ToolOutput {
  readonly [BRAND]: true;
  readonly value: unknown;
  readonly content: string;
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
