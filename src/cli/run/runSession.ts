/**
 * `dsh run` / `dsh resume` once everything is decided (runSetup.ts: the flags, config, model and
 * system prompt): opens (or creates) the session's JSONL log, records the model, picks the output
 * (live view on a TTY, one plain line per event without one, NDJSON with --json, ending with one
 * `result` record) and the approval service, then runs one turn (PROMPT) or a REPL of turns (a TTY
 * without PROMPT).
 *
 * On a terminal, the model's text is drawn from the turn's deltas as it arrives, and a line typed
 * while a turn runs (Enter sends it) steers that turn (`turn.steer`); one that comes too late for
 * it becomes a follow-up turn, which runs (and is drawn) before the next prompt.
 *
 * The session's lease (src/adapters/store/sessionLease.ts) is held from before the log is opened until it is closed:
 * another process on the same session is refused (`LEASE_HELD`) before it reads or writes anything.
 *
 * Ctrl-C: see interruptLadder.ts (the table). Exit: 0 the last turn completed, 1 it failed or ran
 * out of steps, 3 suspended, 130 cancelled; the REPL exits 0 on /exit, Ctrl-D or Ctrl-C at its prompt.
 */
import { realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { InspectionEvent } from 'xstate';
import { JsonlLogError, openJsonlSessionLog } from '../../adapters/log/jsonlLog.js';
import type { LogEvent } from '../../protocol/index.js';
import { closeOpenWork } from '../../runtime/openWork.js';
import { formatEvent } from '../../protocol/logText.js';
import type { CliIo } from '../command.js';
import type { DshConfig } from '../../config/schema.js';
import { onFile } from '../describeError.js';
import { createTerminalRenderer, type TerminalRenderer } from '../view/terminalRenderer.js';
import { argsText, fromInspection } from '../view/runView.js';
import { createAgentSession, type AgentSession, type RunSetup } from './agentSession.js';
import type { Runtime } from '../../runtime/createRuntime.js';
import type { SessionLog } from '../../runtime/log/sessionLog.js';
import type { ApprovalService } from '../../runtime/pipeline/index.js';
import { deniedWithoutTerminal, keystrokeApproval } from './approvals.js';
import { suspendingApproval } from '../../runtime/pipeline/approvalService.js';
import { holdSessionLease, type HeldSessionLease } from '../../adapters/store/sessionLease.js';
import { bwrapSupport } from '../../adapters/sandbox/bwrapProbe.js';
import { checkMessageSize, DEFAULT_MESSAGE_LIMITS, MessageLimitError } from '../../runtime/messageLimits.js';
import { readSteerInput, type SteerInput } from './steerInput.js';
import type { TurnHandle, TurnResult } from '../../runtime/turns.js';
import type { CallStageEvent } from '../../runtime/inspection/index.js';
import { INITIAL_INTERRUPT_STATE, onInterrupt, turnStarted, type InterruptSituation } from './interruptLadder.js';
import { recordableBaseUrl, type SessionModel } from './runSetup.js';
import { replCommand, REPL_HELP } from './replCommands.js';
import type { OtlpTelemetry } from '../../adapters/telemetry/otlpTelemetry.js';

export const EXIT_CANCELLED = 130;
/** The turn is suspended on an approval (`--suspend`): `dsh resume ID` answers it. */
export const EXIT_SUSPENDED = 3;

export interface RunSessionOptions {
  id: string;
  file: string;
  cwd: string;
  prompt?: string;
  /** A model for each turn. */
  models: () => LanguageModelV3;
  /** The model as the log records it (`session/model`); written when it differs from `recorded`. */
  sessionModel?: SessionModel;
  /** Resuming: the model the log last recorded. */
  recorded?: SessionModel;
  /** The system prompt (runSetup.ts: dsh's lines, AGENTS.md files, the config's instructions). */
  system?: string;
  json?: boolean;
  allow?: readonly string[];
  /** Resuming: close what the log left open first. */
  resume?: boolean;
  io: CliIo;
  env: Readonly<Record<string, string | undefined>>;
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
  /** The loaded dsh.config.json: runtime options, `bash` deadline, policies, default model. */
  config?: DshConfig;
  /** Plan mode on for this run (`--plan`), whatever the config says. */
  plan?: boolean;
  /** Every ask suspends the turn (`--suspend`): the question waits in the log for `dsh resume`. */
  suspend?: boolean;
  /** Lines about the setup (the model, the instruction files), printed once the session is held. */
  notes?: readonly string[];
  /** Colours in the live view (previews); see colorWanted. */
  color?: boolean;
  /** Replaces the policies (see RunSetup.installPolicies). */
  installPolicies?: RunSetup['installPolicies'];
  /** `--inspect`: the local inspector page follows the session (src/cli/inspect/runInspector.ts). */
  inspector?: RunInspectorHooks;
  /** The session lease's time to live, ms (default SESSION_LEASE_MS; see src/adapters/store/sessionLease.ts). */
  leaseMs?: number;
  /** `--otel`: export traces and metrics over OTLP/HTTP (so does a config `otel` block not `enabled: false`). */
  otel?: boolean;
}

/** What the inspector needs from a run: the log, the turns' inspection events, the questions. */
export interface RunInspectorHooks {
  /** The approval service: the page's, over the terminal's (none without a terminal: the page alone asks). */
  approval(terminal: ApprovalService | undefined): ApprovalService;
  attach(log: SessionLog): void;
  inspect(ev: InspectionEvent): void;
  /** Every call's stage events (the runtime's stage stream), synchronous stages included. */
  stage(ev: CallStageEvent): void;
}

/** The `--json` stream's last record: how the run ended. */
export interface RunResultRecord {
  type: 'result';
  sessionId: string;
  /** The last turn's outcome (`none`: no turn ran, e.g. an immediate /exit). */
  outcome: string;
  /** The model's text in the last turn's last step. */
  text: string;
  steps: number;
  usage?: TurnResult['usage'];
  error?: string;
  exitCode: number;
}

export async function runSession(o: RunSessionOptions): Promise<number> {
  // An oversized prompt is refused before anything is created, leased or logged.
  if (o.prompt !== undefined) checkMessageSize(o.prompt, 'prompt', { ...DEFAULT_MESSAGE_LIMITS, ...(o.config?.maxMessageBytes !== undefined ? { maxMessageBytes: o.config.maxMessageBytes } : {}) });
  // One process writes a session at a time: the lease is held from before the log is read (its
  // torn tail cut) until the log is closed; another process on it fails here (LEASE_HELD).
  // Telemetry starts before anything is held or written: without its SDK packages the run stops here (one line).
  // The sandbox's probe (a real bubblewrap sandbox, run once per process) starts now, beside the
  // lease and the log; the run waits for its answer before the first turn (runTurns), and a probe
  // that fails is reported there.
  if (o.config?.sandbox?.mode !== 'full-access') bwrapSupport().catch(() => undefined);
  const otel = await startTelemetry(o);
  const held = await holdSessionLease(o.file, {
    command: o.resume ? 'resume' : 'run',
    ...(o.leaseMs !== undefined ? { ttlMs: o.leaseMs } : {}),
    onLost: (e) => {
      // Another process took the session over (this one was stopped longer than the lease):
      // anything more from here would interleave with its writes.
      o.io.err(`dsh: ${e.message}; stopping without writing more to ${o.file}`);
      o.io.exit(1);
    },
  });
  try {
    return await runHeld(o, held, otel);
  } finally {
    held.release();
  }
}

/** The OTLP exporters when `--otel` or the config's `otel` block asks for them (loaded only then). */
async function startTelemetry(o: RunSessionOptions): Promise<OtlpTelemetry | undefined> {
  const block = o.config?.otel;
  if (!o.otel && (!block || block.enabled === false)) return undefined;
  const [{ startOtlpTelemetry }, { packageVersion }] = await Promise.all([import('../../adapters/telemetry/otlpTelemetry.js'), import('../version.js')]);
  const otel = await startOtlpTelemetry({ ...(block ? { config: block } : {}), env: o.env, conversationId: o.id, serviceVersion: packageVersion(), exportTimeoutMs: EXIT_CLOSE_MS });
  // One line when the export failed or timed out, however many places wait for the shutdown.
  let said = false;
  return {
    ...otel,
    shutdown: async (deadlineMs) => {
      const problem = await otel.shutdown(deadlineMs);
      if (problem !== undefined && !said) {
        said = true;
        o.io.err(`dsh: otel: ${problem}`);
      }
      return problem;
    },
  };
}

/** Opens the log (closing what a crash left open, on resume); the log and its file sink. */
async function openSessionLog(o: RunSessionOptions, held: HeldSessionLease) {
  const opened = await onFile(o.file, () => openJsonlSessionLog(o.file, { lease: held })).catch((e: unknown) => {
    if (e instanceof JsonlLogError) throw new Error(`${e.message} (dsh repair ${o.file} can cut the log there, after a backup)`, { cause: e });
    throw e;
  });
  if (opened.torn) o.io.err(`dsh: ${opened.torn.message}`);
  if (o.resume) {
    const closed = closeOpenWork(opened.log, 'the session stopped before this finished (closed on resume)');
    if (closed.calls + closed.steps + closed.turns > 0) {
      o.io.err(`dsh: resumed an interrupted session: ${closed.calls} call(s) marked INTERRUPTED, ${closed.steps} step(s) and ${closed.turns} turn(s) closed`);
    }
  }
  return opened;
}

/** `session/model`, when the session has none yet or runs on another model from here. */
function recordModel(log: SessionLog, model: SessionModel | undefined, recorded: SessionModel | undefined): void {
  if (!model) return;
  const m = { spec: model.spec, ...(model.baseUrl ? { baseUrl: recordableBaseUrl(model.baseUrl) } : {}) };
  if (recorded && recorded.spec === m.spec && recorded.baseUrl === m.baseUrl) return;
  log.append({ type: 'session/model', model: m, ...(recorded ? { previous: recorded } : {}) });
}

async function runHeld(o: RunSessionOptions, held: HeldSessionLease, otel: OtlpTelemetry | undefined): Promise<number> {
  const stdin = o.stdin ?? process.stdin;
  const stdout = o.stdout ?? process.stdout;
  const interactive = !o.json && Boolean(stdin.isTTY && stdout.isTTY);
  const info = o.json ? o.io.err : o.io.out;
  const { log, sink } = await openSessionLog(o, held);

  // The live view of the running turn (a terminal only), and who Ctrl-C talks to.
  let renderer: TerminalRenderer | undefined;
  let current: TurnHandle | undefined;
  let atPrompt: (() => void) | undefined;
  let ladder = INITIAL_INTERRUPT_STATE;
  let closeForExit: () => Promise<void> = async () => {};
  const interrupt = () => {
    const where: InterruptSituation = current ? 'turn' : atPrompt ? 'prompt' : 'idle';
    const next = onInterrupt(ladder, where);
    ladder = next.state;
    switch (next.action) {
      case 'exit-now':
        return o.io.exit(EXIT_CANCELLED);
      case 'leave-repl':
        return atPrompt?.();
      case 'cancel-turn':
        renderer?.feed({ kind: 'status', status: 'cancelling the turn… (Ctrl-C again to quit)' });
        if (!renderer) o.io.err('dsh: cancelling the turn (Ctrl-C again to quit)');
        return current?.cancel('cancelled by Ctrl-C');
      case 'exit-after-close':
        renderer?.stop();
        o.io.err(`dsh: interrupted; the session log is ${o.file}`);
        void closeForExit().finally(() => o.io.exit(EXIT_CANCELLED));
    }
  };

  // While a turn runs on a terminal, what the user types is a steering message (steerInput.ts);
  // an approval question takes the keystrokes while it is open.
  let asking = false;
  let steering: SteerInput | undefined;
  const terminal =
    interactive && !o.suspend
      ? keystrokeApproval({
          input: stdin,
          show: (a) => {
            asking = a !== undefined;
            renderer?.feed({ kind: 'approval', approval: a });
            if (!a) steering?.resume();
          },
          onInterrupt: interrupt,
        })
      : undefined;
  // With --inspect the page answers approvals too (the first answer wins, withdrawing the other).
  // --suspend: an approval suspends the turn (answered later by `dsh resume`, in this or another process).
  const approval = o.suspend ? suspendingApproval : o.inspector ? o.inspector.approval(terminal) : (terminal ?? deniedWithoutTerminal(o.io.err));
  o.inspector?.attach(log);
  const session = createAgentSession({
    cwd: o.cwd,
    sessionId: o.id,
    log,
    model: o.models,
    approval,
    ...(o.allow ? { allow: o.allow } : {}),
    ...(o.config ? { config: o.config } : {}),
    ...(o.plan ? { plan: true } : {}),
    ...(o.system !== undefined ? { system: o.system } : {}),
    ...(o.installPolicies ? { installPolicies: o.installPolicies } : {}),
    ...(otel ? { telemetry: otel.telemetry } : {}),
  });
  closeForExit = async () => {
    await withinMs(EXIT_CLOSE_MS, session.settleHooks());
    await withinMs(EXIT_CLOSE_MS, session.runtime.close());
    // The open spans were ended by close(); the exporters get the rest of the deadline.
    await Promise.all([withinMs(EXIT_CLOSE_MS, onFile(o.file, () => sink.flush())), otel?.shutdown(EXIT_CLOSE_MS)]);
  };
  // With --inspect the page also hears every stage each call enters (the stage stream): the
  // synchronous ones, which no snapshot shows, included.
  if (o.inspector) session.runtime.onStage((e) => o.inspector!.stage(e));

  const print = (e: LogEvent) => (o.json ? o.io.out(JSON.stringify(e)) : o.io.out(formatEvent(e, { full: true })));
  const unsubscribe = log.subscribe((e) => (renderer ? renderer.feed({ kind: 'event', event: e, now: Date.now() }) : print(e)));
  process.on('SIGINT', interrupt);
  // From here on the session ends in the finally below: the MCP servers are closed (rt.close())
  // and the log flushed whatever happens (a failed turn, an error, Ctrl-C).
  let last: TurnResult | undefined;
  let exitCode = 0;
  try {
    await attachConfiguredMcpServers(session.runtime, o.config, o.io, o.cwd);
    exitCode = await runTurns();
  } finally {
    process.off('SIGINT', interrupt);
    try {
      // Result hooks still running see their calls through (each has its own deadline).
      await session.settleHooks();
      await session.runtime.close();
    } finally {
      await session.tools.sandbox.dispose();
      unsubscribe();
      try {
        await onFile(o.file, () => sink.close());
      } finally {
        // Spans and metrics are flushed within the close deadline, whatever the collector does.
        await otel?.shutdown(EXIT_CLOSE_MS);
      }
    }
  }
  if (o.json) o.io.out(JSON.stringify(resultRecord(o.id, last, exitCode)));
  // A new session left before anything happened (an immediate /exit) leaves no empty log behind.
  if (!o.resume && log.events().length === 0) {
    await rm(o.file, { force: true });
    return exitCode;
  }
  const dsh = dshCommandHint(o.env);
  info(`session log: ${o.file}  (${dsh} log ${o.file}; ${dsh} resume ${o.file})`);
  return exitCode;

  async function runTurns(): Promise<number> {
    for (const line of o.notes ?? []) info(line);
    info(`session ${o.id}: ${o.file}`);
    // The sandbox in force for commands (SPEC §10.2: the run says which mode is in force).
    const can = await session.tools.sandbox.check();
    info(`${session.tools.sandbox.describe()}${can.ok ? '' : ` (cannot be made here: ${can.reason}; bash refuses to run)`}`);
    if (o.plan || o.config?.plan) info(`plan mode (${o.plan ? '--plan' : 'config "plan": true'}): only read-only tools run (${session.runtime.tools.list().filter((t) => t.readOnly).map((t) => t.name).join(', ')}); every other call is denied`);
    let code = 0;
    // Turns a late steering message became (they run after the turn it was typed in).
    const followUps: TurnHandle[] = [];
    // One function for every turn, follow-ups included (they inherit it): it feeds the current view.
    // The model's text comes from the turn's deltas (below), not from inspection.
    // With --inspect, the page's live view hears the same events.
    const inspect =
      interactive || o.inspector
        ? (ev: InspectionEvent) => {
            if (interactive) {
              const input = fromInspection(ev, Date.now());
              if (input && input.kind !== 'text') renderer?.feed(input);
            }
            o.inspector?.inspect(ev);
          }
        : undefined;
    // `turn` is a handle, or starts one once the view is there (so the view sees its `turn/start`).
    const watchTurn = async (turn: TurnHandle | (() => TurnHandle)) => {
      ladder = turnStarted(ladder);
      if (interactive) renderer = createTerminalRenderer(stdout, { color: o.color === true });
      // The session's model, recorded before the session's first turn (and when it changed).
      if (!modelRecorded) {
        modelRecorded = true;
        recordModel(log, o.sessionModel, o.recorded);
      }
      const handle = typeof turn === 'function' ? turn() : turn;
      const stopDeltas = renderer ? handle.onDelta((d) => d.type === 'text-delta' && renderer?.feed({ kind: 'text', delta: d.delta })) : undefined;
      current = handle;
      if (interactive) {
        steering = readSteerInput({
          input: stdin,
          show: (text) => renderer?.feed({ kind: 'input', text }),
          submit: (text) => {
            let steered: ReturnType<typeof handle.steer>;
            try {
              steered = handle.steer(text);
            } catch (e) {
              // Too big, or too many waiting (messageLimits.ts): refused, nothing logged; the turn goes on.
              if (!(e instanceof MessageLimitError)) throw e;
              renderer?.feed({ kind: 'status', status: `steer refused: ${e.message}` });
              if (!renderer) o.io.err(`dsh: steer refused: ${e.message}`);
              return;
            }
            void steered.then((s) => {
              if (s.delivered === 'follow-up') followUps.push(s.turn);
            });
          },
          onInterrupt: interrupt,
          isAsking: () => asking,
        });
      }
      try {
        const r = await handle.done;
        last = r;
        code = exitCodeOf(r);
        if (r.outcome === 'suspended') o.io.err(`dsh: ${r.turnId} is suspended on an approval; answer it with: ${dshCommandHint(o.env)} resume ${o.id}`);
      } finally {
        steering?.stop();
        steering = undefined;
        stopDeltas?.();
        current = undefined;
        renderer?.stop();
        renderer = undefined;
      }
    };
    let modelRecorded = false;
    const runTurn = async (input: string) => {
      await watchTurn(() => session.startTurn(input, inspect ? { inspect } : {}));
      for (let next = followUps.shift(); next; next = followUps.shift()) await watchTurn(next);
    };
    const pending = session.runtime.pendingSuspension();
    if (pending) {
      // The question the session waits on is shown, then asked again as the turn goes on.
      for (const a of pending.approvals) {
        o.io.err(`dsh: ${pending.turnId} waits for approval: ${a.toolName} ${argsText(a.input)} (${a.callId})${a.reason ? `: ${a.reason}` : ''}`);
      }
      await watchTurn(() => session.resumeTurn(inspect ? { inspect } : {}));
      // Suspended again: the next question waits for the next resume.
      if (code === EXIT_SUSPENDED) return code;
    }
    if (o.prompt !== undefined) {
      await runTurn(o.prompt);
      return code;
    }
    if (pending && !interactive) return code;
    return repl(session, runTurn);
  }

  /** Turns from the `dsh>` prompt until /exit, Ctrl-D or Ctrl-C there; slash commands are dsh's own. */
  async function repl(session: AgentSession, runTurn: (input: string) => Promise<void>): Promise<number> {
    for (;;) {
      const line = await question(stdin, stdout, 'dsh> ', (leave) => (atPrompt = leave));
      atPrompt = undefined;
      // Leaving the REPL is a normal end, whatever the last turn did. What follows starts on a line of its own.
      if (line === undefined) {
        stdout.write('\n');
        return 0;
      }
      const command = replCommand(line);
      if (command?.kind === 'text') {
        await runTurn(command.text);
        continue;
      }
      if (command?.kind === 'exit') return 0;
      if (command?.kind === 'help') {
        o.io.out(REPL_HELP);
        continue;
      }
      if (command?.kind === 'unknown') {
        o.io.out(`dsh: unknown command ${command.name} (not sent to the model; /help lists the commands)`);
        continue;
      }
      if (command?.kind === 'session') {
        o.io.out(`session ${o.id}: ${o.file} (${session.runtime.log.events().filter((e) => e.type === 'turn/start').length} turn(s) in this process)`);
        continue;
      }
      if (line.trim()) await runTurn(line);
    }
  }
}

/**
 * How to run dsh again from here: `dsh`, or `npm run dsh --` in dsh's own checkout under `npm start`
 * / `npm run dsh` (there is no `dsh` on the PATH there).
 */
export function dshCommandHint(env: Readonly<Record<string, string | undefined>>, bin: string | undefined = process.argv[1]): string {
  if (env.npm_package_name === 'dsh' && (env.npm_lifecycle_event === 'start' || env.npm_lifecycle_event === 'dsh')) return 'npm run dsh --';
  // npx puts the package's bin on this process's PATH only: the user's shell does not have it.
  if (env.npm_command === 'exec') return 'npx dsh';
  return bin !== undefined && dshOnPath(env.PATH, bin) ? 'dsh' : 'npx dsh';
}

/** Whether a `dsh` on `path` is this very program (`bin`, symlinks resolved): then the hint can say plain `dsh`. */
function dshOnPath(path: string | undefined, bin: string): boolean {
  let self: string;
  try {
    self = realpathSync(bin);
  } catch {
    return false;
  }
  for (const dir of (path ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    try {
      if (realpathSync(join(dir, 'dsh')) === self) return true;
    } catch {
      // not there
    }
  }
  return false;
}

function exitCodeOf(r: TurnResult): number {
  return r.outcome === 'completed' ? 0 : r.outcome === 'cancelled' ? EXIT_CANCELLED : r.outcome === 'suspended' ? EXIT_SUSPENDED : 1;
}

/** The `--json` stream's last line. */
export function resultRecord(sessionId: string, r: TurnResult | undefined, exitCode: number): RunResultRecord {
  return {
    type: 'result',
    sessionId,
    outcome: r?.outcome ?? 'none',
    text: r?.text ?? '',
    steps: r?.steps ?? 0,
    ...(r?.usage ? { usage: r.usage } : {}),
    ...(r?.error ? { error: r.error } : {}),
    exitCode,
  };
}

/** How long an exit on Ctrl-C waits for the runtime to close, then for the log to be written. */
export const EXIT_CLOSE_MS = 5_000;

/** Settles when `work` does (its failure ignored) or after `ms`, whichever is first. */
function withinMs(ms: number, work: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void work.then(
      () => (clearTimeout(timer), resolve()),
      () => (clearTimeout(timer), resolve()),
    );
  });
}

/**
 * The config's `mcpServers`, connected and registered on the session's runtime after the built-in
 * tools (`server__tool`, under the same policies). A server that cannot start is one line on
 * stderr (and a `warning` event in the log); the session goes on without it. `rt.close()` stops them.
 */
async function attachConfiguredMcpServers(runtime: Runtime, config: DshConfig | undefined, io: CliIo, workspaceRoot: string): Promise<void> {
  const servers = config?.mcpServers;
  if (!servers || Object.keys(servers).length === 0) return;
  const { attachMcpServers } = await import('../../adapters/mcp/toolSource.js');
  const source = await attachMcpServers(runtime, servers, { workspaceRoot });
  for (const s of source.skipped) {
    if (s.tool === undefined) io.err(`dsh: MCP server "${s.server}" skipped: ${firstLine(s.reason)}`);
  }
}

const firstLine = (s: string) => s.split('\n', 1)[0]!.slice(0, 300);

/** One line from the terminal; undefined at EOF or Ctrl-C (`onLeave` gets the function that leaves). */
function question(input: NodeJS.ReadStream, output: NodeJS.WriteStream, prompt: string, onLeave: (leave: () => void) => void): Promise<string | undefined> {
  return new Promise((resolve) => {
    const rl = createInterface({ input, output, terminal: true });
    let answered = false;
    onLeave(() => rl.close());
    rl.on('SIGINT', () => rl.close());
    rl.on('close', () => {
      if (!answered) resolve(undefined);
    });
    rl.question(prompt, (line) => {
      answered = true;
      rl.close();
      resolve(line);
    });
  });
}
