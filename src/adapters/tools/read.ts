import * as z from 'zod';
import { ErrorCode } from '../../protocol/index.js';
import { defineTool } from '../../runtime/defineTool.js';
import { ToolError } from '../../runtime/toolError.js';
import type { SpillStore } from '../../runtime/spill/spillStore.js';
import { readSpilledPage } from '../../runtime/spill/spilledLines.js';
import { pageLines } from './linePage.js';
import type { Workspace } from './workspace.js';

export const DEFAULT_READ_LIMIT_LINES = 2000;
// Below the spill policy's default inline limit, so a page is shown whole rather than spilled.
export const DEFAULT_MAX_READ_BYTES = 12_288;

const ReadInput = z
  .object({
    path: z.string().min(1).optional().describe('File to read, relative to the workspace root.'),
    locator: z.string().min(1).optional().describe('A spill locator from an earlier result, instead of a path.'),
    offset: z.number().int().min(1).optional().describe('First line to return, 1-based (default 1).'),
    limit: z.number().int().min(1).optional().describe(`Most lines to return (default ${DEFAULT_READ_LIMIT_LINES}).`),
  })
  .refine((a) => (a.path === undefined) !== (a.locator === undefined), { message: 'give exactly one of "path" or "locator"' });

const ReadOutput = z.object({
  text: z.string(),
  source: z.string(),
  startLine: z.number().int(),
  endLine: z.number().int(),
  totalLines: z.number().int(),
  cutLineBytes: z.number().int().optional(),
});
type ReadOutput = z.infer<typeof ReadOutput>;

/** A NUL byte near the start is what git and grep take for binary content too. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8000).includes(0);
}

/** The model's copy of a page: the lines verbatim, plus a note only when there is more to read. */
function readContent(v: ReadOutput): string {
  if (v.totalLines === 0) return `[read: ${v.source} is empty]`;
  if (v.endLine < v.startLine) return `[read: ${v.source} has ${v.totalLines} lines; offset ${v.startLine} is past the end]`;
  const notes: string[] = [];
  if (v.cutLineBytes !== undefined) {
    notes.push(`line ${v.endLine} is ${v.cutLineBytes} bytes long; only its start is shown (search within it with grep)`);
  }
  if (v.endLine < v.totalLines) notes.push(`lines ${v.startLine}–${v.endLine} of ${v.totalLines} shown; continue with offset=${v.endLine + 1}`);
  if (notes.length === 0) return v.text;
  return `${v.text}${v.text.endsWith('\n') ? '' : '\n'}[read: ${notes.join('; ')}]`;
}

/** `read`: a page of lines from a workspace file (recording the version seen) or from a spilled output. */
export function createReadTool(ws: Workspace, options: { spillStore?: SpillStore; maxReadBytes?: number } = {}) {
  const maxBytes = options.maxReadBytes ?? DEFAULT_MAX_READ_BYTES;
  return defineTool({
    name: 'read',
    description:
      'Read a text file from the workspace (or a spilled output by its locator), a page of lines at a time. ' +
      'Reading a file is required before editing or overwriting it.',
    input: ReadInput,
    output: ReadOutput,
    isConcurrencySafe: () => true,
    idempotent: true,
    readOnly: true,
    toContent: readContent,
    async execute(args, exec): Promise<ReadOutput> {
      const offset = args.offset ?? 1;
      const limit = args.limit ?? DEFAULT_READ_LIMIT_LINES;
      if (args.locator !== undefined) {
        if (!options.spillStore) throw new ToolError(ErrorCode.FS_NOT_FOUND, 'this session has no spill store, so no locator can be read');
        // Only the page is read from the store (through its line index), never the whole output.
        const page = await readSpilledPage(options.spillStore, args.locator, offset, limit, maxBytes);
        return { ...page, source: `spilled output ${args.locator}` };
      }
      const snap = await ws.readFile(args.path!);
      if (looksBinary(snap.bytes)) throw new ToolError(ErrorCode.TOOL_FAILED, `${snap.path.display} looks like a binary file; read shows text only`);
      exec.signal.throwIfAborted();
      const page = pageLines(snap.bytes.toString('utf8'), offset, limit, maxBytes);
      return { ...page, source: snap.path.display };
    },
  });
}
