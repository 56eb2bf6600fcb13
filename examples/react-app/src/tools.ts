/**
 * In-memory tools: a small file map held by the page, no Node, no network. `read` is
 * concurrency-safe (a batch of reads runs in parallel) and may wait for another read to finish
 * first (`after`), so a batch can finish in any order the script says; `write` is exclusive.
 */
import * as z from 'zod';
import { ErrorCode, ToolError, defineTool } from 'dsh';

export type Files = Map<string, string>;

export function initialFiles(): Files {
  return new Map([
    ['notes/plan.md', '# Plan\n- read the notes\n- write a summary\n'],
    ['notes/todo.md', '- ship the example\n'],
    ['notes/done.md', '- the session view\n'],
  ]);
}

export function createTools(files: Files) {
  /** Reads finished so far, in the order they finished (the page shows it). */
  const finished: string[] = [];
  const waiting = new Map<string, Array<() => void>>();
  const finish = (path: string) => {
    finished.push(path);
    for (const wake of waiting.get(path) ?? []) wake();
    waiting.delete(path);
  };
  /** Resolves once the read of `path` has finished (at once if it has). */
  const finishedRead = (path: string, signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (finished.includes(path)) return resolve();
      waiting.set(path, [...(waiting.get(path) ?? []), resolve]);
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });

  // Hold mode: each read waits for the person to finish it (a button on its row), in any order.
  let holding = false;
  const held = new Map<string, () => void>();
  const released = new Set<string>();
  const heldRead = (path: string, signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (released.delete(path)) return resolve();
      held.set(path, resolve);
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  /** Finishes a held read of `path` (or lets it through at once if it has not started waiting yet). */
  const release = (path: string) => {
    const wake = held.get(path);
    held.delete(path);
    if (wake) wake();
    else released.add(path);
  };

  const read = defineTool({
    name: 'read',
    description: 'Read a file of the in-memory workspace (after the read of `after`, when given)',
    input: z.object({ path: z.string(), after: z.string().optional() }),
    isConcurrencySafe: () => true,
    readOnly: true,
    execute: async ({ path, after }, exec) => {
      await pause(exec.signal);
      if (holding) await heldRead(path, exec.signal);
      else if (after !== undefined) await finishedRead(after, exec.signal);
      const text = files.get(path);
      finish(path);
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

  /** Forgets which reads finished (a new turn's batch starts over). */
  const reset = () => {
    finished.splice(0);
    released.clear();
  };
  return {
    read,
    write,
    all: [read, write],
    finished: () => [...finished],
    reset,
    release,
    setHolding: (on: boolean) => void (holding = on),
    isHolding: () => holding,
  };
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
