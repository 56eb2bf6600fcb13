/**
 * A tour of the pipeline on the embedded scripted model (no API key, no network): one turn in
 * which the model asks for calls that are allowed, denied by policy, asked and approved, refused
 * by the guard, failing, and timed out; then it answers. Prints the session log as it grows.
 */
import * as z from 'zod';
import { scriptedModel } from '../adapters/model/index.js';
import { createRuntime, defineTool, timeout, type SessionLog } from '../index.js';
import { formatEvent } from '../protocol/logText.js';
import type { TurnResult } from '../runtime/turns.js';

export interface TourOptions {
  /** Where the session log goes (default: a fresh in-memory log). */
  log?: SessionLog;
  /** Where the readable lines go (default: stdout). */
  print?: (line: string) => void;
}

/** Runs the tour turn; prints the log as it grows; resolves with the turn's outcome. */
export async function runTour(options: TourOptions = {}): Promise<TurnResult & { notes: string | undefined }> {
  const print = options.print ?? ((line: string) => console.log(line));
  const files = new Map([
    ['README.md', '# demo\nA tiny workspace.\n'],
    ['notes.txt', 'buy milk\n'],
  ]);

  const read = defineTool({
    name: 'read',
    description: 'Read a file of the demo workspace',
    input: z.object({ path: z.string() }),
    isConcurrencySafe: () => true,
    execute: async ({ path }) => {
      const text = files.get(path);
      if (text === undefined) throw new Error(`no such file: ${path}`);
      return text;
    },
  });
  const write = defineTool({
    name: 'write',
    description: 'Write a file of the demo workspace',
    input: z.object({ path: z.string(), text: z.string() }),
    execute: async ({ path, text }) => {
      files.set(path, text);
      return `wrote ${text.length} chars to ${path}`;
    },
  });
  const rm = defineTool({ name: 'rm', description: 'Delete a file', input: z.object({ path: z.string() }), execute: async () => 'deleted' });
  const fetchUrl = defineTool({
    name: 'fetch',
    description: 'Fetch a URL (this demo one never answers; it stops when its call is aborted, as a real tool does)',
    input: z.object({ url: z.string() }),
    isConcurrencySafe: () => true,
    execute: (_args, exec) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => resolve('too late'), 800);
        exec.signal.addEventListener('abort', () => (clearTimeout(timer), reject(exec.signal.reason)), { once: true });
      }),
  });

  const rt = createRuntime({
    tools: [read, write, rm, fetchUrl],
    ...(options.log ? { log: options.log } : {}),
    // The "user" approves every question after a short pause.
    approval: {
      request: async (req) => {
        await new Promise((r) => setTimeout(r, 50));
        print(`      (user approves ${req.toolName} ${JSON.stringify(req.args)})`);
        return 'allowed-once';
      },
    },
  });
  rt.hooks.on('tools/pre-execute', 'protect-system-files', (call, next) => {
    const path = (call.args as { path?: string }).path ?? '';
    if (call.toolName === 'write' && path.startsWith('/etc/')) return { kind: 'deny', reason: `${path} is a system file` };
    return next();
  });
  rt.hooks.on('tools/pre-execute', 'ask-before-writing', (call, next) =>
    call.toolName === 'write' ? { kind: 'ask', reason: 'the model wants to change a file' } : next(),
  );
  rt.tools.guard((call) => (call.toolName === 'rm' ? 'deleting files is never allowed' : undefined), 'no-rm');
  rt.hooks.on('tools/execute', 'timeout', timeout({ ms: 300 }));

  const model = scriptedModel([
    {
      text: 'Let me look around first.',
      toolCalls: [
        { toolName: 'read', input: { path: 'README.md' } },
        { toolName: 'read', input: { path: 'notes.txt' } },
        { toolName: 'read', input: { path: 'missing.txt' } },
        { toolName: 'fetch', input: { url: 'https://example.invalid/slow' } },
        { toolName: 'write', input: { path: 'notes.txt', text: 'buy milk\nbuy bread\n' } },
        { toolName: 'write', input: { path: '/etc/passwd', text: 'x' } },
        { toolName: 'rm', input: { path: 'README.md' } },
        { toolName: 'read', input: '{"path": 42}' },
      ],
    },
    { text: 'I added bread to your notes. I could not fetch the page, read missing.txt, touch /etc/passwd or delete README.md.' },
  ]);

  print('dsh pipeline tour: one turn on the embedded scripted model\n');
  for (const e of rt.log.events()) print(formatEvent(e));
  rt.log.subscribe((e) => print(formatEvent(e)));
  const outcome = await rt.startTurn({ model, input: 'Tidy up my notes' }).done;
  print(`\noutcome: ${outcome.outcome}; notes.txt is now ${JSON.stringify(files.get('notes.txt'))}`);
  return { ...outcome, notes: files.get('notes.txt') };
}
