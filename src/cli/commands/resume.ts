/** `dsh resume ID [PROMPT]`: go on with a session, closing what it left open first. */
import type { Command } from '../command.js';
import { UsageError } from '../command.js';
import { promptOrStdin } from './run.js';
import { describeSetup, RUN_CONFIG_HELP, RUN_EXIT_HELP, RUN_FLAGS_HELP, RUN_OPTIONS } from './run.js';

export const resumeCommand: Command = {
  name: 'resume',
  summary: 'go on with a session (closing what it left open)',
  synopsis: 'dsh resume ID|FILE [PROMPT] [--model SPEC] [--base-url URL] [--allow TOOL] [--plan] [--suspend] [--json] [--otel]',
  details: `Reopens the session ID (.dsh/sessions/ID.jsonl of the current directory, or a log FILE) and runs
PROMPT as its next turn, in the directory the session works in (<dir> of
<dir>/.dsh/sessions/ID.jsonl); without PROMPT on a terminal, a REPL. A session that stopped mid-turn
(a crash, a kill) is closed first: every tool/call without a result gets an INTERRUPTED one, open
steps and turns are ended, so every call stays paired and nothing already logged is lost. A torn
last line is cut off and reported; a corrupt log is an error (dsh repair). A session whose turn is
suspended on an approval (dsh run --suspend) is not closed: its pending question is shown and asked
(on a terminal one keystroke; without one it is denied unless --allow pre-approves the tool), the
same call goes on from there and the turn finishes (the model is not asked again for that step);
then PROMPT, if given, runs as the next turn. The session goes on with the model its log recorded
(spec and server; never a key): a --model of another one is allowed, and logged (session/model).

${RUN_FLAGS_HELP}

${RUN_CONFIG_HELP} The config is the one of the directory the session works in.

${RUN_EXIT_HELP}`,
  options: RUN_OPTIONS,
  positionals: { min: 1, max: 2, name: 'ID (the session to resume)' },
  async run({ values, positionals }, io) {
    const [{ runSession }, { sessionFileOf, sessionWorkDir }, { existsSync }, { basename }, { prepareRun, readRunFlags, recordedModel, sessionOptionsOf }] = await Promise.all([
      import('../run/runSession.js'),
      import('../run/sessionFiles.js'),
      import('node:fs'),
      import('node:path'),
      import('../run/runSetup.js'),
    ]);
    const flags = readRunFlags(values);
    const file = sessionFileOf(process.cwd(), positionals[0]!);
    // The tools work where the session did: <dir> of <dir>/.dsh/sessions/<id>.jsonl.
    const cwd = sessionWorkDir(file, process.cwd());
    if (!existsSync(file)) throw new Error(`no session ${positionals[0]} (${file}: no such file; dsh sessions lists them)`);
    let prompt = positionals[1];
    const tty = Boolean(process.stdin.isTTY && process.stdout.isTTY) && !flags.json;
    prompt = await promptOrStdin(prompt);
    // Without a terminal a PROMPT is needed, unless the session waits on a suspended approval.
    if (prompt === undefined && !tty && !(await hasSuspendedTurn(file))) {
      throw new UsageError('missing PROMPT (without a terminal there is no REPL; the prompt may also come on stdin)', resumeCommand);
    }
    // The config, the model (the session's own, unless --model says otherwise) and the
    // instructions before the log is opened (a bad one leaves the log untouched).
    const recorded = await recordedModel(file);
    const setup = await prepareRun({ cwd, env: process.env, flags, command: resumeCommand, exit: io.exit, ...(recorded ? { recorded } : {}) });
    // Printed once the session is held (a refused resume prints nothing but its error).
    const notes = describeSetup(setup);
    if (recorded && setup.model.model.spec !== recorded.spec) notes.push(`dsh resume: the session ran on ${recorded.spec}${recorded.baseUrl ? ` at ${recorded.baseUrl}` : ''}; it goes on with ${setup.model.model.spec} (logged)`);
    return runSession({
      ...sessionOptionsOf(setup, flags, { io, env: process.env, isTTY: Boolean(process.stdout.isTTY) }),
      id: basename(file).replace(/\.jsonl$/, ''),
      file,
      cwd,
      ...(prompt !== undefined ? { prompt } : {}),
      ...(recorded ? { recorded } : {}),
      notes,
      resume: true,
    });
  },
};

/** True when the session log ends on a turn suspended on an approval (read without changing it). */
async function hasSuspendedTurn(file: string): Promise<boolean> {
  const [{ readJsonlLog }, { findPendingSuspension }] = await Promise.all([import('../../adapters/log/jsonlLog.js'), import('../../runtime/resume/pendingSuspension.js')]);
  try {
    return findPendingSuspension((await readJsonlLog(file)).events) !== undefined;
  } catch {
    return false; // runSession reports a corrupt log
  }
}
