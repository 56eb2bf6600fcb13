import * as z from 'zod';
import { defineTool } from '../../runtime/defineTool.js';
import { unifiedDiff } from '../../runtime/views/unifiedDiff.js';
import type { Workspace } from './workspace.js';

const WriteInput = z.object({
  path: z.string().min(1).describe('File to create or replace, relative to the workspace root.'),
  content: z.string().describe('The complete new content of the file.'),
});

/** `write`: creates a file, or replaces one this session has read and that has not changed since. */
export function createWriteTool(ws: Workspace) {
  return defineTool({
    name: 'write',
    description:
      'Write a whole file in the workspace (parent directories are created). ' +
      'An existing file must have been read first in this session and be unchanged since.',
    input: WriteInput,
    // The approval shows the diff against the file as it is now; a new file is all additions.
    async preview(args) {
      const now = await ws.peek(args.path);
      const diff = unifiedDiff(now.path.display, now.text, args.content);
      return { kind: 'diff', text: diff || `${now.path.display}: the content is unchanged` };
    },
    async execute(args, exec): Promise<string> {
      const intent = await ws.writeIntent(args.path);
      exec.signal.throwIfAborted();
      const version = await ws.commit(intent, Buffer.from(args.content, 'utf8'));
      return `${intent.existed ? 'replaced' : 'created'} ${intent.path.display} (${version.size} bytes)`;
    },
  });
}
