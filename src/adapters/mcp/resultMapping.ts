/**
 * An MCP `tools/call` result as a dsh result: `structuredContent` is the canonical value, text
 * parts are the model-facing content, images, audio and resources stay typed parts (never
 * stringified), and `isError: true` is a `TOOL_FAILED` error result whose content is the server's text.
 */
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, type ContentPart } from '../../protocol/index.js';
import { ToolError } from '../../runtime/toolError.js';
import { toolOutput, type ToolOutput } from '../../runtime/pipeline/draft.js';

/** Bounds on an MCP tool result's typed parts. */
export interface ResultMappingLimits {
  /** Most characters of base64/text held in typed parts of one result (default 8 MiB); beyond it a part becomes a note. */
  maxPartChars: number;
}
export const defaultResultMappingLimits: ResultMappingLimits = { maxPartChars: 8 * 1024 * 1024 };

/** Maps a result (throws a `TOOL_FAILED` ToolError for `isError: true`). */
export function mapCallToolResult(result: CallToolResult, where: { server: string; tool: string }, limits = defaultResultMappingLimits): ToolOutput {
  const texts: string[] = [];
  const parts: ContentPart[] = [];
  let budget = limits.maxPartChars;
  const keep = (part: ContentPart, size: number, what: string) => {
    if (size > budget) {
      texts.push(`[${what} of ${size} characters left out: over the ${limits.maxPartChars}-character limit for typed parts of one result]`);
      return;
    }
    budget -= size;
    parts.push(part);
  };
  for (const block of (result.content ?? []) as ContentBlock[]) {
    switch (block.type) {
      case 'text':
        texts.push(block.text);
        break;
      case 'image':
        keep({ type: 'image', data: block.data, mediaType: block.mimeType }, block.data.length, `an image (${block.mimeType})`);
        break;
      case 'audio':
        keep({ type: 'audio', data: block.data, mediaType: block.mimeType }, block.data.length, `audio (${block.mimeType})`);
        break;
      case 'resource': {
        const r = block.resource;
        const body = 'text' in r && typeof r.text === 'string' ? { text: r.text } : 'blob' in r && typeof r.blob === 'string' ? { data: r.blob } : {};
        const size = (body.text ?? body.data ?? '').length;
        keep({ type: 'resource', uri: r.uri, ...(r.mimeType ? { mediaType: r.mimeType } : {}), ...body }, size, `resource ${r.uri}`);
        break;
      }
      case 'resource_link':
        keep({ type: 'resource', uri: block.uri, ...(block.mimeType ? { mediaType: block.mimeType } : {}) }, block.uri.length, `resource link ${block.uri}`);
        break;
      default:
        texts.push(`[content of unsupported type ${JSON.stringify(String((block as { type?: unknown }).type)).slice(0, 60)} left out]`);
    }
  }
  const text = texts.join('\n');
  if (result.isError === true) {
    const firstLine = text.split('\n', 1)[0]!.slice(0, 200);
    throw new ToolError(ErrorCode.TOOL_FAILED, `"${where.tool}" on MCP server "${where.server}" reported an error${firstLine ? `: ${firstLine}` : ''}`, {
      content: text || `the MCP tool "${where.tool}" reported an error without text`,
    });
  }
  const structured = result.structuredContent;
  // Servers should mirror structured content as text; when one does not, the model still sees it.
  const content = text === '' && structured !== undefined ? JSON.stringify(structured) : text;
  return toolOutput({ value: structured !== undefined ? structured : text, content, parts });
}
