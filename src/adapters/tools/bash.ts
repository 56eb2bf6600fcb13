import { z } from 'zod';
import { ErrorCode } from '../../protocol/index.js';
import { defineTool } from '../../runtime/defineTool.js';
import { ToolError } from '../../runtime/toolError.js';
import { runInProcessGroup, type GroupRun } from './processGroup.js';
import type { Workspace } from './workspace.js';

export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
const MAX_BASH_TIMEOUT_MS = 600_000;

const BashInput = z.object({
  command: z.string().min(1).describe('A bash command line, run with the workspace root as its working directory.'),
  timeoutMs: z.number().int().min(1).max(MAX_BASH_TIMEOUT_MS).optional().describe(`Deadline in ms (default ${DEFAULT_BASH_TIMEOUT_MS}).`),
});

const BashOutput = z.object({
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  stdout: z.string(),
  stderr: z.string(),
  droppedBytes: z.number().int().nonnegative(),
});

function bashContent(r: GroupRun): string {
  const parts: string[] = [];
  if (r.stdout !== '') parts.push(r.stdout.endsWith('\n') ? r.stdout : `${r.stdout}\n`);
  if (r.stderr !== '') parts.push(`[stderr]\n${r.stderr.endsWith('\n') ? r.stderr : `${r.stderr}\n`}`);
  if (r.droppedBytes > 0) parts.push(`[bash: ${r.droppedBytes} more bytes of output were dropped]\n`);
  parts.push(r.signal ? `[killed by ${r.signal}]` : `[exit code ${r.exitCode}]`);
  return parts.join('');
}

/**
 * `bash`: runs a command in the workspace in its own process group; on abort, timeout or exit the
 * whole group is killed. A non-zero exit is a result for the model to read, not a tool failure.
 */
export function createBashTool(ws: Workspace, options: { defaultTimeoutMs?: number; killGraceMs?: number; maxOutputBytes?: number } = {}) {
  return defineTool({
    name: 'bash',
    description:
      'Run a bash command in the workspace root. Returns stdout, stderr and the exit code. ' +
      'Background jobs do not outlive the command: its whole process group is killed when it ends, times out or is cancelled.',
    input: BashInput,
    output: BashOutput,
    toContent: bashContent,
    async execute(args, exec): Promise<GroupRun> {
      const cwd = await ws.realRoot();
      const ms = args.timeoutMs ?? options.defaultTimeoutMs ?? DEFAULT_BASH_TIMEOUT_MS;
      // The command's own deadline, fused with the caller's signal (which a timeout wrapper may own).
      const deadline = new AbortController();
      const timer = exec.clock.setTimeout(() => deadline.abort(new ToolError(ErrorCode.TIMEOUT, `command did not finish within ${ms} ms`)), ms);
      const signal = AbortSignal.any([exec.signal, deadline.signal]);
      try {
        return await runInProcessGroup(args.command, { cwd, signal, killGraceMs: options.killGraceMs, maxOutputBytes: options.maxOutputBytes });
      } finally {
        exec.clock.clearTimeout(timer);
      }
    },
  });
}
