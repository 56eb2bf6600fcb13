/**
 * In-memory tools: a small file map held by the page, no Node, no network. `read` is
 * concurrency-safe (a batch of reads runs in parallel); `write` is exclusive and always asks.
 */
import * as z from 'zod';
import { ErrorCode, ToolError, defineTool } from 'dsh';

export type Files = Map<string, string>;

export function initialFiles(): Files {
  return new Map([
    ['notes/plan.md', '# Plan\n- read the notes\n- write a summary\n'],
    ['notes/todo.md', '- ship the example\n'],
    ['secrets/token', 'not-a-real-token'],
  ]);
}

export function createTools(files: Files) {
  const read = defineTool({
    name: 'read',
    description: 'Read a file of the in-memory workspace',
    input: z.object({ path: z.string() }),
    isConcurrencySafe: () => true,
    readOnly: true,
    execute: async ({ path }, exec) => {
      await pause(exec.signal);
      const text = files.get(path);
      if (text === undefined) throw new ToolError(ErrorCode.FS_NOT_FOUND, `no such file: ${path}`);
      return text;
    },
  });

  const write = defineTool({
    name: 'write',
    description: 'Write a file of the in-memory workspace',
    input: z.object({ path: z.string(), content: z.string() }),
    execute: async ({ path, content }, exec) => {
      await pause(exec.signal);
      files.set(path, content);
      return `wrote ${content.length} characters to ${path}`;
    },
  });

  return { read, write, all: [read, write] };
}

/** A body that takes a moment (a macrotask), so its stage can be seen; honours the call's signal. */
function pause(signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, 0);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}
