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
} as const;

export const RUN_FLAGS_HELP = `  --model SPEC      provider:model — openai:MODEL, anthropic:MODEL (key from OPENAI_API_KEY /
                    ANTHROPIC_API_KEY), openai-compatible:MODEL with --base-url; scripted:FILE.json
                    replays a JSON array of scripted responses. Default: "model" of dsh.config.json,
                    else the embedded scripted model (no key, no network): it reads and greps in
                    parallel, proposes an edit (asks), runs a command (asks) and answers.
  --base-url URL    the provider's server (required for openai-compatible)
  --allow TOOL      pre-approve a tool that asks (write, edit, bash); repeat or comma-separate.
                    It answers yes to questions only: it never lifts a deny (plan mode, a config
                    "deny" rule, a bash.deny pattern)
  --plan            plan mode: only read-only tools (read, grep, glob) run; every other call is
                    denied with a reason telling the model to answer with its plan instead (also
                    "plan": true in dsh.config.json)
  --json            stream the session log's events as NDJSON on stdout (no questions: asks are denied)
  --suspend         an ask suspends the turn instead of being answered now: the question stays
                    in the session log, the process exits 3, and dsh resume ID asks it later
                    (in any process) and finishes the same turn
  -h, --help        this text`;

export const RUN_CONFIG_HELP = `Configuration: dsh.config.json in the working directory (or a parent up to the repository
root) over $XDG_CONFIG_HOME/dsh/config.json (see the README); a bad one is one line naming the file
and the field, exit 1, before any session is made. Its policies come first: plan mode, then the
"permissions" rules (the first matching rule decides: deny, allow without asking, or ask); a call
no rule matches gets the default (ask before write, edit and bash). "bash.deny" patterns deny a
command outright (GUARD_DENIED). It also sets "model", "concurrency", "maxInlineBytes" and
"timeouts" (hookMs, approvalMs, abortGraceMs, bashMs).`;

export const RUN_EXIT_HELP = `On a terminal: a live view (one row per tool call with its pipeline stage, a spinner and the
elapsed time; the model's text as it streams) and one-keystroke approvals (y once, a always,
n deny). Without one: one plain line per event, and every ask is denied with a line naming the
--allow that pre-approves it. Ctrl-C cancels the turn; a second Ctrl-C exits.

One process writes a session at a time: while dsh run or dsh resume has a session open (it holds
the session's lease, .dsh/sessions/ID.lease.N), another dsh resume of it is refused at once
(LEASE_HELD, naming the holder; exit 1). A lease left by a process that was killed is taken over
at once on the same machine, else once it expires (30 s).

Exit: 0 the turn completed (the REPL: left with /exit, Ctrl-D or Ctrl-C at its prompt), 1 it
failed or ran out of steps, or a file/model error, or the session is in use by another process
(LEASE_HELD), 2 bad usage, 3 suspended on an approval (--suspend; dsh resume ID answers it),
130 cancelled (Ctrl-C).`;

/** Splits `--allow a,b --allow c`. */
export function allowList(value: string | boolean | string[] | undefined): string[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
}

export const runCommand: Command = {
  name: 'run',
  summary: 'run an agent in the current directory (embedded model by default)',
  synopsis: 'dsh run [PROMPT] [--model SPEC] [--allow TOOL] [--plan] [--json] [--demo] [--inspect]',
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
    const [{ runSession, modelFactory }, { newSessionFile }, { loadConfig }] = await Promise.all([
      import('../run/runSession.js'),
      import('../run/sessionFiles.js'),
      import('../config/load.js'),
    ]);
    const demo = values.demo === true;
    const tty = Boolean(process.stdin.isTTY && process.stdout.isTTY) && values.json !== true;
    let prompt = positionals[0];
    let cwd = process.cwd();
    const allow = allowList(values.allow as string[] | undefined);
    if (demo) {
      if (values.model !== undefined) throw new UsageError('--demo runs the embedded model: drop --model', runCommand);
      const { createDemoWorkspace } = await import('../run/demoWorkspace.js');
      cwd = createDemoWorkspace();
      prompt ??= 'Have a look at this project and mark its README as reviewed.';
      io.out(`dsh demo: a throwaway copy of the example project in ${cwd}`);
      if (!tty) {
        allow.push('edit', 'write', 'bash');
        io.out('dsh demo: no terminal to ask, so edit, write and bash are pre-approved (as with --allow edit,write,bash)');
      }
    }
    if (prompt === undefined && !tty) throw new UsageError('missing PROMPT (without a terminal there is no REPL)', runCommand);
    // The config and the model first: a bad config, a bad spec or a missing key fails before a
    // session file is made. The demo always runs the embedded model.
    const { config } = await loadConfig({ cwd, env: process.env });
    const spec = demo ? undefined : ((values.model as string | undefined) ?? config.model);
    const models = await modelFactory(spec, { cwd, baseUrl: values['base-url'] as string | undefined, env: process.env });
    const { id, file } = newSessionFile(cwd);
    const info = values.json === true ? io.err : io.out;
    const inspector = values.inspect === true ? await (await import('../inspect/runInspector.js')).startRunInspector(id) : undefined;
    if (inspector) info(`dsh run: inspector at ${inspector.url}`);
    const running = runSession({
      id,
      file,
      cwd,
      ...(prompt !== undefined ? { prompt } : {}),
      models,
      json: values.json === true,
      allow,
      config,
      plan: values.plan === true,
      suspend: values.suspend === true,
      io,
      env: process.env,
      ...(inspector ? { inspector: inspector.hooks } : {}),
    });
    const code = await running.catch(async (e: unknown) => {
      await inspector?.close();
      throw e;
    });
    if (inspector) {
      inspector.end();
      info(`dsh run: the run has ended; the inspector stays at ${inspector.url} until Ctrl-C`);
      const { untilStopped } = await import('../inspect/untilStopped.js');
      await untilStopped();
      await inspector.close();
    }
    return code;
  },
};
