/** `dsh run [PROMPT]`: an agent in the current directory with the built-in tools. */
import type { Command } from '../command.js';
import { UsageError } from '../command.js';

export const RUN_OPTIONS = {
  model: { type: 'string' },
  'base-url': { type: 'string' },
  json: { type: 'boolean' },
  allow: { type: 'string', multiple: true },
  plan: { type: 'boolean' },
  suspend: { type: 'boolean' },
  'no-color': { type: 'boolean' },
  otel: { type: 'boolean' },
  'trust-project-servers': { type: 'boolean' },
} as const;

export const RUN_FLAGS_HELP = `  --model SPEC      provider:model — openai:MODEL, anthropic:MODEL (key from OPENAI_API_KEY /
                    ANTHROPIC_API_KEY), openai-compatible:MODEL with --base-url; scripted:FILE.json
                    replays a JSON array of scripted responses; embedded is the scripted demo model
                    (no key, no network), on the real directory. Default: the model the session's
                    log recorded (dsh resume), else "model" of dsh.config.json; with none, dsh run
                    refuses (try dsh run --demo)
  --base-url URL    the provider's server (required for openai-compatible; also "baseUrl" in
                    dsh.config.json)
  --allow TOOL      pre-approve a tool that asks (write, edit, bash); repeat or comma-separate.
                    It answers yes to questions only: it never lifts a deny (plan mode, a config
                    "deny" rule, a bash.deny pattern)
  --plan            plan mode: only read-only tools (read, grep, glob) run; every other call is
                    denied with a reason telling the model to answer with its plan instead (also
                    "plan": true in dsh.config.json)
  --json            stream the session log's events as NDJSON on stdout (no questions: asks are
                    denied), then one last record {"type":"result", sessionId, outcome, text,
                    steps, usage, exitCode}
  --no-color        no colours in approval previews (also NO_COLOR=1)
  --suspend         an ask suspends the turn instead of being answered now: the question stays
                    in the session log, the process exits 3, and dsh resume ID asks it later
                    (in any process) and finishes the same turn
  --otel            export OpenTelemetry traces and metrics (GenAI conventions) over OTLP/HTTP
                    to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318), or the
                    config's "otel" block; flushed on exit and on Ctrl-C (docs/telemetry.md)
  --trust-project-servers
                    start the MCP servers the project's dsh.config.json names without asking, this
                    run only (CI). Otherwise such a server starts once you approved its exact
                    command: on a terminal dsh asks once; without one, dsh mcp trust remembers it
  -h, --help        this text`;

export const RUN_CONFIG_HELP = `Configuration: dsh.config.json at the project root (the repository root; outside a repository
the working directory) over $XDG_CONFIG_HOME/dsh/config.json (see the README); a dsh.config.json
between the project root and the working directory can only narrow (each key that would widen is
ignored with a line); a bad one is one line naming the file and the field, exit 1, before any
session is made. Its policies come first: plan mode, then the
"permissions" rules (the first matching rule decides: deny, allow without asking, or ask); a call
no rule matches gets the default (ask before write, edit and bash). "bash.deny" patterns deny a
command outright (GUARD_DENIED). It also sets "model", "baseUrl", "callOptions" (temperature,
maxOutputTokens, …), "instructions", "concurrency", "maxInlineBytes" and "timeouts" (hookMs,
approvalMs, abortGraceMs, bashMs).

System prompt: dsh's own lines, then $XDG_CONFIG_HOME/dsh/AGENTS.md, then the nearest AGENTS.md
from the working directory up to the repository root (outside a repository: the working directory
only), then the config's "instructions". dsh run names the files it read.`;

export const RUN_EXIT_HELP = `On a terminal: a live view (one row per tool call with its pipeline stage, a spinner and the
elapsed time; the model's text as it streams) and one-keystroke approvals that show what they
approve (a diff for edit and write, the command for bash, the arguments otherwise): y once,
a always, n deny, r deny with a reason (typed, Enter sends it to the model). In the REPL, /help
lists dsh's commands. Without a terminal: one plain line per event, and every ask is denied with
a line naming the --allow that pre-approves it; PROMPT may come on stdin (echo "…" | dsh run).
Ctrl-C cancels the turn; a second Ctrl-C exits.

One process writes a session at a time: while dsh run or dsh resume has a session open (it holds
the session's lease, .dsh/sessions/ID.lease.N), another dsh resume of it is refused at once
(LEASE_HELD, naming the holder; exit 1). A lease left by a process that was killed is taken over
at once on the same machine, else once it expires (30 s).

Exit: 0 the turn completed (the REPL: left with /exit, Ctrl-D or Ctrl-C at its prompt), 1 it
failed or ran out of steps, or a file/model error, or the session is in use by another process
(LEASE_HELD), 2 bad usage, 3 suspended on an approval (--suspend; dsh resume ID answers it),
130 cancelled (Ctrl-C).`;

export const runCommand: Command = {
  name: 'run',
  summary: 'run an agent in the current directory (--demo: on a throwaway example project)',
  synopsis: 'dsh run [PROMPT] [--model SPEC] [--base-url URL] [--allow TOOL] [--plan] [--suspend] [--json] [--otel] [--demo] [--inspect]',
  details: `Runs PROMPT as one turn of a new session in the current directory, with the built-in tools
(read, grep, glob, write, edit, bash) confined to it. Without PROMPT on a terminal: a REPL, one
turn after another in the same session (/exit or Ctrl-D ends it). The session is logged to
.dsh/sessions/<id>.jsonl (dsh sessions, dsh log, dsh resume).

${RUN_FLAGS_HELP}
  --demo            work in a fresh throwaway copy of an example project (in the temp directory),
                    on the embedded model, with a default prompt; without a terminal, edit, write
                    and bash are pre-approved (it is a throwaway copy). What \`npm start\` runs.
  --inspect         follow the session on a local page (see dsh inspect): live statecharts, stages,
                    the log; questions are answered there too (without a terminal, only there).
                    The page stays up after the run until Ctrl-C

${RUN_CONFIG_HELP}

${RUN_EXIT_HELP}`,
  options: { ...RUN_OPTIONS, demo: { type: 'boolean' }, inspect: { type: 'boolean' } },
  positionals: { min: 0, max: 1, name: 'PROMPT' },
  async run({ values, positionals }, io) {
    const [{ runSession }, { newSessionFile }, { prepareRun, readRunFlags, sessionOptionsOf }] = await Promise.all([
      import('../run/runSession.js'),
      import('../run/sessionFiles.js'),
      import('../run/runSetup.js'),
    ]);
    const flags = readRunFlags(values);
    const demo = values.demo === true;
    const tty = Boolean(process.stdin.isTTY && process.stdout.isTTY) && !flags.json;
    let prompt = positionals[0];
    let cwd = process.cwd();
    const allow = [...flags.allow];
    if (demo && flags.model !== undefined) throw new UsageError('--demo runs the embedded model: drop --model', runCommand);
    // Headless: the prompt may come on stdin (`echo "…" | dsh run`, or `dsh run -`).
    prompt = await promptOrStdin(prompt);
    if (prompt === undefined && !tty && !demo) throw new UsageError('missing PROMPT (without a terminal there is no REPL; the prompt may also come on stdin)', runCommand);
    if (demo) {
      const { createDemoWorkspace } = await import('../run/demoWorkspace.js');
      cwd = createDemoWorkspace();
      prompt ??= 'Have a look at this project and mark its README as reviewed.';
      io.out(`dsh demo: a throwaway copy of the example project in ${cwd}`);
      if (!tty) {
        allow.push('edit', 'write', 'bash');
        io.out('dsh demo: no terminal to ask, so edit, write and bash are pre-approved (as with --allow edit,write,bash)');
      }
    }
    // The config, the model and the instructions first: a bad config, a bad spec, a missing key
    // or no model at all fails before a session file is made. The demo reads those of its copy.
    const setup = await prepareRun({ cwd, env: process.env, flags, command: runCommand, demo, exit: io.exit });
    const { id, file } = newSessionFile(cwd);
    const info = flags.json ? io.err : io.out;
    const inspector = values.inspect === true ? await (await import('../inspect/runInspector.js')).startRunInspector(id) : undefined;
    if (inspector) info(`dsh run: inspector at ${inspector.url}`);
    const running = runSession({
      ...sessionOptionsOf(setup, flags, { io, env: process.env, isTTY: Boolean(process.stdout.isTTY) }),
      id,
      file,
      cwd,
      ...(prompt !== undefined ? { prompt } : {}),
      notes: describeSetup(setup),
      allow,
      ...(inspector ? { inspector: inspector.hooks } : {}),
    });
    const code = await running.catch(async (e: unknown) => {
      await inspector?.close();
      throw e;
    });
    if (inspector) {
      inspector.end();
      // The signal handlers first, then the line that says Ctrl-C works: a `kill` sent as soon as
      // the line is read must find them installed (else Node's default ends the process by signal).
      const { untilStopped } = await import('../inspect/untilStopped.js');
      const stopped = untilStopped();
      info(`dsh run: the run has ended; the inspector stays at ${inspector.url} until Ctrl-C`);
      await stopped;
      await inspector.close();
    }
    return code;
  },
};

/** The most a prompt read from stdin may be. */
export const MAX_STDIN_PROMPT_BYTES = 1024 * 1024;

/**
 * PROMPT as given; `-`, or none while stdin is a pipe, a socket or a file (`echo "…" | dsh run`,
 * `dsh run < task.md`, a program that spawns dsh with Node's `child_process`, whose stdin is a
 * socket pair): the prompt read from stdin, to its end. A terminal or a device (`/dev/null`) is not
 * read. A program that leaves stdin open and gives a prompt as an argument is not waited on.
 */
export async function promptOrStdin(prompt: string | undefined): Promise<string | undefined> {
  if (prompt !== undefined && prompt !== '-') return prompt;
  if (prompt === undefined) {
    if (process.stdin.isTTY) return undefined;
    const { fstatSync } = await import('node:fs');
    let st;
    try {
      st = fstatSync(0);
    } catch {
      return undefined;
    }
    if (!st.isFIFO() && !st.isFile() && !st.isSocket()) return undefined;
  }
  const text = await readStdinPrompt();
  if (text === undefined && prompt === '-') throw new UsageError('PROMPT "-": nothing on stdin', runCommand, { usage: false });
  return text;
}

/** The prompt piped on stdin (trimmed); undefined when there is none (empty, or stdin closed). */
export async function readStdinPrompt(stdin: NodeJS.ReadableStream = process.stdin): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > MAX_STDIN_PROMPT_BYTES) throw new UsageError(`the prompt on stdin is over ${MAX_STDIN_PROMPT_BYTES} bytes`, runCommand, { usage: false });
    chunks.push(b);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  return text ? text : undefined;
}

/** One line each: the model (and where it came from), the instruction files read, any cut or refused. */
export function describeSetup(setup: import('../run/runSetup.js').RunSetupResult): string[] {
  const m = setup.model;
  const lines = [`model: ${m.model.spec}${m.model.baseUrl ? ` at ${m.model.baseUrl}` : ''} (${m.source === 'config' ? 'from dsh.config.json' : m.source === 'session log' ? "the session's" : m.source})`];
  if (setup.system.files.length > 0) lines.push(`instructions: ${setup.system.files.join(', ')}`);
  for (const note of setup.system.notes) lines.push(`instructions: ${note}`);
  return lines;
}
