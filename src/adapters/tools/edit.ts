import * as z from 'zod';
import { ErrorCode } from '../../protocol/index.js';
import { defineTool } from '../../runtime/defineTool.js';
import { ToolError } from '../../runtime/toolError.js';
import { unifiedDiff } from '../../runtime/views/unifiedDiff.js';
import type { Workspace } from './workspace.js';

const EditInput = z
  .object({
    path: z.string().min(1).describe('File to edit, relative to the workspace root. It must have been read in this session.'),
    oldString: z.string().min(1).describe('Exact text to replace (whitespace included).'),
    newString: z.string().describe('Replacement text.'),
    replaceAll: z.boolean().optional().describe('Replace every occurrence; otherwise oldString must occur exactly once.'),
  })
  .refine((a) => a.oldString !== a.newString, { message: 'oldString and newString are identical: nothing to change' });

function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** `edit`: exact string replacement in a file this session has read and that has not changed since. */
export function createEditTool(ws: Workspace) {
  return defineTool({
    name: 'edit',
    description:
      'Replace an exact string in a workspace file. oldString must occur exactly once unless replaceAll is true. ' +
      'The file must have been read in this session and be unchanged since.',
    input: EditInput,
    // The approval shows the diff against the file as it is now (or why the edit would fail).
    async preview(args) {
      const now = await ws.peek(args.path);
      if (now.text === undefined) return { kind: 'diff', text: `${now.path.display} does not exist: the edit would fail` };
      const count = occurrences(now.text, args.oldString);
      if (count === 0) return { kind: 'diff', text: `oldString is not in ${now.path.display}: the edit would fail` };
      if (count > 1 && !args.replaceAll) return { kind: 'diff', text: `oldString occurs ${count} times in ${now.path.display}: the edit would fail (not unique)` };
      const updated = args.replaceAll ? now.text.split(args.oldString).join(args.newString) : replaceOnce(now.text, args.oldString, args.newString);
      return { kind: 'diff', text: unifiedDiff(now.path.display, now.text, updated) };
    },
    async execute(args, exec): Promise<string> {
      const intent = await ws.editIntent(args.path);
      const count = occurrences(intent.text, args.oldString);
      if (count === 0) throw new ToolError(ErrorCode.TOOL_FAILED, `oldString was not found in ${intent.path.display}; nothing was changed`);
      if (count > 1 && !args.replaceAll) {
        throw new ToolError(
          ErrorCode.TOOL_FAILED,
          `oldString occurs ${count} times in ${intent.path.display}; add surrounding context to make it unique, or set replaceAll`,
        );
      }
      // split/join rather than String.replace: the replacement is literal, `$&` and friends included.
      const updated = args.replaceAll ? intent.text.split(args.oldString).join(args.newString) : replaceOnce(intent.text, args.oldString, args.newString);
      exec.signal.throwIfAborted();
      await ws.commit(intent, Buffer.from(updated, 'utf8'));
      return `edited ${intent.path.display}: ${args.replaceAll ? count : 1} replacement${(args.replaceAll ? count : 1) === 1 ? '' : 's'}`;
    },
  });
}

function replaceOnce(text: string, oldString: string, newString: string): string {
  const i = text.indexOf(oldString);
  return text.slice(0, i) + newString + text.slice(i + oldString.length);
}
