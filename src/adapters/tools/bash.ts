import { StringDecoder } from 'node:string_decoder';
import * as z from 'zod';
import { ErrorCode } from '../../protocol/index.js';
import { defineTool } from '../../runtime/defineTool.js';
import { commandApprovalKeys } from '../../runtime/policies/commandRules.js';
import { ToolError } from '../../runtime/toolError.js';
import { createSandbox, SandboxUnavailableError, type Quarantined, type Sandbox } from '../sandbox/sandbox.js';
import { initArgv, runIsolated, type Isolation, type ProcessRun } from './isolatedProcess.js';
import { pidNamespaceSupport, type PidNamespaceProbe } from './pidNamespace.js';
import type { Workspace } from './workspace.js';

/** A `bash` command's deadline when the call sets none (ms). */
export const DEFAULT_BASH_TIMEOUT_MS = 120_000;
const MAX_BASH_TIMEOUT_MS = 600_000;
/** A stopped command's output goes into an error result, which no spill policy sees: keep its tail only. */
const PARTIAL_TAIL_CHARS = 16 * 1024;

/**
 * How `bash` keeps a command's processes from outliving the call.
 * - `pid-namespace` (default): a PID namespace that dies with the call and with dsh itself; where
 *   it is unavailable, `bash` refuses to run.
 * - `process-group`: the explicit opt-in to the weaker mode (a `setsid` or double-forked process,
 *   or any process once dsh is SIGKILLed, can survive).
 */
export type BashIsolation = 'pid-namespace' | 'process-group';

/** The `bash` tool: its sandbox, its default deadline and kill grace, how it keeps a command's processes from outliving the call. */
export interface BashToolOptions {
  defaultTimeoutMs?: number;
  killGraceMs?: number;
  maxOutputBytes?: number;
  /** Default `pid-namespace`. */
  isolation?: BashIsolation;
  /** How `pid-namespace` support is found (default: probed once per process with util-linux on PATH). */
  probePidNamespace?: () => Promise<PidNamespaceProbe>;
  /**
   * The OS sandbox every command runs in (default: `workspace-write` over the workspace root, no
   * network, secrets withheld). In `read-only` and `workspace-write` its own PID namespace bounds
   * the command's processes and `isolation` is not used; in `full-access` `isolation` does.
   */
  sandbox?: Sandbox;
}

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
  /** What the command created at a protected path, moved into `.dsh/quarantine/` after it ended. */
  quarantined: z.array(z.object({ rule: z.string(), path: z.string(), movedTo: z.string() })).optional(),
});
export type BashRun = z.infer<typeof BashOutput>;

function withNewline(s: string): string {
  return s.endsWith('\n') ? s : `${s}\n`;
}

function outputText(stdout: string, stderr: string): string {
  const parts: string[] = [];
  if (stdout !== '') parts.push(withNewline(stdout));
  if (stderr !== '') parts.push(`[stderr]\n${withNewline(stderr)}`);
  return parts.join('');
}

function bashContent(r: BashRun): string {
  const dropped = r.droppedBytes > 0 ? `[bash: ${r.droppedBytes} more bytes of output were dropped]\n` : '';
  const moved = (r.quarantined ?? []).map((q) => `\n[sandbox: ${q.path} is protected (${q.rule}); what the command created there was moved to ${q.movedTo}]`).join('');
  return `${outputText(r.stdout, r.stderr)}${dropped}${r.signal ? `[killed by ${r.signal}]` : `[exit code ${r.exitCode}]`}${moved}`;
}

function tail(s: string): { text: string; cut: number } {
  return s.length > PARTIAL_TAIL_CHARS ? { text: s.slice(-PARTIAL_TAIL_CHARS), cut: s.length - PARTIAL_TAIL_CHARS } : { text: s, cut: 0 };
}

/** The error a stopped command settles with: its code and message, then the output it had produced, marked partial. */
function stoppedError(run: ProcessRun, error: { code: ErrorCode; message: string }): ToolError {
  const out = tail(run.stdout);
  const err = tail(run.stderr);
  const notes: string[] = [];
  if (out.cut > 0) notes.push(`${out.cut} earlier characters of stdout not shown`);
  if (err.cut > 0) notes.push(`${err.cut} earlier characters of stderr not shown`);
  if (run.droppedBytes > 0) notes.push(`${run.droppedBytes} bytes of output were dropped`);
  const how = error.code === ErrorCode.TIMEOUT ? 'timed out' : 'was cancelled';
  const content =
    `${error.code}: ${error.message}\n` +
    outputText(out.text, err.text) +
    `[partial output: the command ${how} and was killed before it finished; no exit code${notes.length ? `; ${notes.join('; ')}` : ''}]`;
  return new ToolError(error.code, error.message, {
    content,
    metadata: { exitCode: null, signal: run.signal, partial: true, stdoutChars: run.stdout.length, stderrChars: run.stderr.length, droppedBytes: run.droppedBytes },
  });
}

/**
 * `bash`: runs a command in the workspace, isolated so that nothing it starts outlives the call
 * (see {@link BashIsolation}). A non-zero exit is a result for the model to read (`isError` false),
 * with the exit code in its content and metadata; a timeout or cancel is an error result carrying
 * the output produced so far, marked partial.
 */
export function createBashTool(ws: Workspace, options: BashToolOptions = {}) {
  const sandbox = options.sandbox ?? createSandbox({ root: ws.root });
  const mode = sandbox.mode === 'full-access' ? (options.isolation ?? 'pid-namespace') : 'sandbox';
  const probe = options.probePidNamespace ?? pidNamespaceSupport;
  const grace = options.killGraceMs ?? 1000;
  async function isolation(): Promise<Isolation> {
    if (mode === 'process-group') return { kind: 'process-group' };
    const p = await probe();
    if (p.ok) return { kind: 'pid-namespace', prefix: p.prefix };
    throw new ToolError(
      ErrorCode.TOOL_FAILED,
      `bash refuses to run: it cannot isolate the command in a PID namespace, so processes it starts could outlive the call (${p.reason}). ` +
        `It needs Linux with util-linux setpriv and unshare, and root or unprivileged user namespaces. ` +
        `To run with the weaker process-group isolation instead (setsid and double-forked processes can survive), ` +
        `pass createBuiltinTools({ bashIsolation: 'process-group' }).`,
    );
  }
  /** The command line, its environment and its after-step, as the sandbox mode says. */
  async function prepare(command: string, cwd: string) {
    try {
      if (mode === 'sandbox') {
        const w = await sandbox.wrap(initArgv(command, grace), { cwd, asPid1: true, infoFd: 3 });
        return { iso: { kind: 'sandboxed', file: w.file, args: w.args, infoFd: 3 } as const, env: w.env, finish: w.finish };
      }
      const w = await sandbox.wrap(['/bin/bash', '-c', command], { cwd });
      return { iso: await isolation(), env: w.env, finish: w.finish };
    } catch (e) {
      if (!(e instanceof SandboxUnavailableError)) throw e;
      throw new ToolError(
        ErrorCode.TOOL_FAILED,
        `bash refuses to run: it cannot make its ${sandbox.mode} sandbox (${e.reason}). ` +
          `It needs Linux with bubblewrap (apt-get install bubblewrap) and root or unprivileged user namespaces. ` +
          `To run commands without a sandbox, with your full rights, choose it explicitly: ` +
          `"sandbox": { "mode": "full-access" } in dsh.config.json, or createBuiltinTools({ sandbox: 'full-access' }).`,
      );
    }
  }
  return defineTool({
    name: 'bash',
    description:
      'Run a bash command in the workspace root. Returns stdout, stderr and the exit code (a non-zero exit code is not an error). ' +
      'It runs in a sandbox (by default: writes only in the workspace and /tmp, no network, no credentials in the environment; .dsh, dsh.config.json and .git are read-only: commit, branch and fetch are for the user). ' +
      'Nothing the command starts outlives it: background jobs, nohup, setsid and double-forked processes are killed when it ends, times out or is cancelled ' +
      '(a timed-out or cancelled command returns its output so far, marked partial).',
    input: BashInput,
    output: BashOutput,
    toContent: bashContent,
    toMetadata: (r: BashRun) => ({
      exitCode: r.exitCode,
      signal: r.signal,
      isolation: mode === 'sandbox' ? 'pid-namespace' : mode,
      sandbox: sandbox.mode,
      network: sandbox.mode === 'full-access' || sandbox.network,
      ...(r.quarantined ? { quarantined: r.quarantined.length } : {}),
    }),
    // `allowed-always` remembers the whole parsed line in a normal form, never a part of it (issue 31 item 7).
    approvalKeys: (args) => commandApprovalKeys(args),
    // The approval shows the command as it will run (the whole of it, not a one-line summary).
    preview: (args) => ({ kind: 'command', text: args.timeoutMs !== undefined ? `${args.command}\n(deadline ${args.timeoutMs} ms)` : args.command }),
    async execute(args, exec): Promise<BashRun> {
      const cwd = await ws.realRoot();
      const { iso, env, finish } = await prepare(args.command, cwd);
      const ms = args.timeoutMs ?? options.defaultTimeoutMs ?? DEFAULT_BASH_TIMEOUT_MS;
      // The command's own deadline, fused with the caller's signal (which a timeout wrapper may own).
      const deadline = new AbortController();
      const timeoutError = new ToolError(ErrorCode.TIMEOUT, `command did not finish within ${ms} ms`);
      const timer = exec.clock.setTimeout(() => deadline.abort(timeoutError), ms);
      const signal = AbortSignal.any([exec.signal, deadline.signal]);
      // The output streams as `tool/progress` events while the command runs (coalesced and bounded
      // per event by the runtime); the result still carries the whole output.
      const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
      const onOutput = (stream: 'stdout' | 'stderr', chunk: Buffer) => {
        const text = decoders[stream].write(chunk);
        if (text) exec.progress({ output: text });
      };
      let run: ProcessRun;
      try {
        run = await runIsolated(args.command, { cwd, env, signal, isolation: iso, killGraceMs: grace, maxOutputBytes: options.maxOutputBytes, onOutput });
      } finally {
        exec.clock.clearTimeout(timer);
      }
      // Every process of the command is gone: what it made at a protected path can be moved aside.
      const quarantined: readonly Quarantined[] = await finish();
      if (run.stopped) {
        const reason = run.stopReason;
        if (reason instanceof ToolError) throw stoppedError(run, reason);
        throw stoppedError(run, { code: ErrorCode.ABORTED, message: `cancelled: ${reason instanceof Error ? reason.message : String(reason ?? 'cancelled')}` });
      }
      return {
        exitCode: run.exitCode,
        signal: run.signal,
        stdout: run.stdout,
        stderr: run.stderr,
        droppedBytes: run.droppedBytes,
        ...(quarantined.length > 0 ? { quarantined: [...quarantined] } : {}),
      };
    },
  });
}
