/**
 * The `dsh` command: global flags, then dispatch to one command per file under commands/.
 *   dsh run [PROMPT]          an agent in the current directory (commands/run.ts)
 *   dsh sessions | resume | log | repair   sessions on disk (commands/*.ts)
 *   dsh mcp list              the configured MCP servers and their tools (commands/mcp.ts)
 *   dsh policy test | replay  the config's examples; the policies replayed over sessions (commands/policy.ts)
 *   dsh inspect [SESSION]     a session in the browser: a local page (commands/inspect.ts, inspect/)
 *   dsh serve                 the sessions over the session wire protocol (commands/serve.ts, serve/)
 *   dsh [tour] [--log FILE]   the pipeline tour (commands/tour.ts)
 *   dsh -h | --help | --version | help [COMMAND] | COMMAND --help
 * Exit codes: 0 done, 1 failed (a file error or corrupt log: one line on stderr, the stack only
 * with DSH_DEBUG=1), 2 bad usage (unknown command, flag or extra argument: the usage on stderr),
 * 130 a run cancelled with Ctrl-C.
 * The heavy modules (the runtime, the log adapter) are loaded by the command that runs, so
 * `--version` and `--help` start fast. The process entry is bin.ts.
 */
import { visible } from '../protocol/visibleText.js';
import { commandUsage, ExitRequest, parseCommandArgs, UsageError, type CliIo, type Command } from './command.js';
import { inspectCommand } from './commands/inspect.js';
import { logCommand } from './commands/log.js';
import { mcpCommand } from './commands/mcp.js';
import { policyCommand } from './commands/policy.js';
import { repairCommand } from './commands/repair.js';
import { resumeCommand } from './commands/resume.js';
import { runCommand } from './commands/run.js';
import { serveCommand } from './commands/serve.js';
import { sessionsCommand } from './commands/sessions.js';
import { tourCommand } from './commands/tour.js';
import { submitCommand, workerCommand } from './commands/worker.js';
import { describeError } from './describeError.js';
import { packageVersion } from './version.js';

/**
 * `dsh mcp list`: the servers of the current directory's config (a bad config fails the command),
 * a project's only once trusted; `dsh mcp trust` trusts the project's.
 */
const mcpListCommand = mcpCommand(
  async () => {
    const [{ loadConfig }, { trustedServers }] = await Promise.all([import('../config/load.js'), import('../config/serverTrust.js')]);
    const { config, serverOrigins, ignored } = await loadConfig({ cwd: process.cwd(), env: process.env });
    const warn = (line: string) => void process.stderr.write(`${line}\n`);
    for (const line of ignored) warn(line);
    return trustedServers({ servers: config.mcpServers ?? {}, origins: serverOrigins, env: process.env, warn });
  },
  {
    trust: async () => {
      const [{ loadConfig }, { trustAllProjectServers }] = await Promise.all([import('../config/load.js'), import('../config/serverTrust.js')]);
      const { config, serverOrigins } = await loadConfig({ cwd: process.cwd(), env: process.env });
      return trustAllProjectServers(config.mcpServers ?? {}, serverOrigins, process.env);
    },
  },
);

export const COMMANDS: readonly Command[] = [runCommand, sessionsCommand, resumeCommand, logCommand, repairCommand, mcpListCommand, policyCommand, tourCommand, inspectCommand, serveCommand, workerCommand, submitCommand];

export const USAGE = `usage:
${COMMANDS.map((c) => `  ${c.synopsis}\n      ${c.summary}`).join('\n')}
  dsh COMMAND --help        help on a command
  dsh -h, --help            this text
  dsh --version             the version

Exit codes: 0 done, 1 failed (one line on stderr; DSH_DEBUG=1 adds the stack), 2 bad usage,
130 a run cancelled with Ctrl-C.`;

/** Runs the command; resolves with the process exit code. Never rejects. */
export async function main(
  argv: readonly string[],
  out: (line: string) => void = console.log,
  err: (line: string) => void = console.error,
  env: Readonly<Record<string, string | undefined>> = process.env,
  exit: (code: number) => never = (code) => {
    throw new ExitRequest(code);
  },
): Promise<number> {
  // Every line dsh prints may carry what a model, a tool, a log or the command line chose: shown, never obeyed (SPEC §10.6).
  const [rawOut, rawErr] = [out, err];
  out = (line) => rawOut(visible(line));
  err = (line) => rawErr(visible(line));
  const io: CliIo = { out, err, exit };
  let command: Command | undefined;
  try {
    const [first, ...rest] = argv;
    if (first === '-h' || first === '--help') return usage(out, rest);
    if (first === '--version') {
      if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest.join(' ')}`);
      out(packageVersion());
      return 0;
    }
    if (first === 'help') {
      const [name, ...extra] = rest;
      if (extra.length > 0) throw new UsageError(`unexpected argument: ${extra.join(' ')}`);
      if (name === undefined) return usage(out, []);
      const c = COMMANDS.find((c) => c.name === name);
      if (!c) throw new UsageError(`unknown command "${name}"`);
      out(commandUsage(c));
      return 0;
    }
    // No command, or a flag first (`dsh --log FILE`): the tour.
    command = first === undefined || first.startsWith('-') ? tourCommand : COMMANDS.find((c) => c.name === first);
    if (!command) throw new UsageError(`unknown command "${first}"`);
    const args = parseCommandArgs(command, command === tourCommand && first !== 'tour' ? argv : rest);
    if (args.help) {
      out(commandUsage(command));
      return 0;
    }
    return await command.run(args, io);
  } catch (e) {
    if (e instanceof ExitRequest) return e.code;
    if (e instanceof UsageError) {
      err(`dsh${e.command ? ` ${e.command.name}` : ''}: ${e.message}`);
      if (e.options.usage !== false) err(e.command ? `usage: ${e.command.synopsis}  (dsh ${e.command.name} --help for more)` : USAGE);
      return 2;
    }
    err(`dsh${command ? ` ${command.name}` : ''}: ${describeError(e)}`);
    if (env.DSH_DEBUG) err(stackOf(e));
    return 1;
  }
}

function usage(out: (line: string) => void, rest: readonly string[]): number {
  if (rest.length > 0) throw new UsageError(`unexpected argument: ${rest.join(' ')}`);
  out(USAGE);
  return 0;
}

function stackOf(e: unknown): string {
  try {
    return (e instanceof Error && e.stack) || String(e);
  } catch {
    return '(no stack)';
  }
}
