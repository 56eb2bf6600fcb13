// The second Ctrl-C of `dsh run` exits (130), but only once the runtime is closed (its disposers,
// e.g. MCP servers, have run) and what the session log holds is written to its file: an event
// logged just before the exit (a call's progress, not a commit point) is in the file when the
// process exits. In-process through runSession (the exit is observed, not performed); the
// Ctrl-Cs are the SIGINT listener runSession installs, called as the signal would call it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/adapters/model/scriptedModel.js';
import { EXIT_CANCELLED, runSession } from '../../src/cli/run/runSession.js';
import { newSessionFile } from '../../src/cli/run/sessionFiles.js';
import { defineTool } from '../../src/runtime/defineTool.js';
import type { SessionLog } from '../../src/runtime/log/sessionLog.js';
import { waitFor } from './spawnDsh.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('a second Ctrl-C during dsh run', () => {
  it('closes the runtime and writes the log before it exits 130', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-second-ctrlc-'));
    dirs.push(dir);
    const { id, file } = newSessionFile(dir);
    const order: string[] = [];
    let linesAtExit: string[] | undefined;
    // The process's end, as bin.ts would pass it (here observed, not done).
    const exit = vi.fn(((code: number) => {
      order.push(`exit ${code}`);
      linesAtExit ??= readFileSync(file, 'utf8').split('\n').filter(Boolean);
      return undefined as never;
    }) as (code: number) => never);
    // A call that reports progress, then ignores its abort until the runtime's grace runs out.
    let started = false;
    const stuck = defineTool({
      name: 'stuck',
      input: z.object({}),
      execute: async (_args, ctx) => {
        ctx.progress({ output: 'half way there' });
        started = true;
        return new Promise<string>(() => {});
      },
    });
    let log: SessionLog | undefined;
    const before = new Set(process.listeners('SIGINT'));
    const running = runSession({
      id,
      file,
      cwd: dir,
      prompt: 'go',
      models: () => scriptedModel([{ toolCalls: [{ toolName: 'stuck', input: {} }] }, { text: 'stopped' }]),
      io: { out: () => {}, err: () => {}, exit },
      env: {},
      installPolicies: (rt) => {
        rt.tools.register(stuck);
        rt.onClose(async () => {
          await new Promise((r) => setTimeout(r, 50));
          order.push('runtime closed');
        });
      },
      inspector: {
        approval: () => ({ request: async () => 'denied' }),
        attach: (l) => (log = l),
        inspect: () => {},
        stage: () => {},
      },
    });
    await waitFor(() => started && log?.events().some((e) => e.type === 'tool/progress'), 'the call to report progress');
    const interrupt = process.listeners('SIGINT').find((l) => !before.has(l)) as (() => void) | undefined;
    expect(interrupt).toBeDefined();
    interrupt!(); // cancels the turn
    interrupt!(); // exits
    await waitFor(() => exit.mock.calls.length > 0, 'the exit');
    expect(exit.mock.calls).toEqual([[EXIT_CANCELLED]]);
    expect(order).toEqual(['runtime closed', `exit ${EXIT_CANCELLED}`]);
    // Every event the log held when the second Ctrl-C came is in the file when the process exits.
    const progress = log!.events().find((e) => e.type === 'tool/progress')!;
    expect(linesAtExit!.length).toBeGreaterThanOrEqual(progress.seq);
    expect(linesAtExit!.some((l) => l.includes('"type":"tool/progress"') && l.includes('half way there'))).toBe(true);
    // (The observed exit did not happen: the run goes on to its end and returns.)
    expect(await running).toBe(EXIT_CANCELLED);
  }, 120_000);
});
