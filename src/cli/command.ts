/**
 * What a `dsh` subcommand is (one file per command under commands/), and how its arguments are
 * parsed: node's `util.parseArgs` in strict mode, so an unknown flag, a missing value or an extra
 * argument is a usage error (exit 2), never silently ignored.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Where a command writes: one call per line. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /**
   * Ends the process now with `code`, for what cannot wait for the command to return (a second
   * Ctrl-C, a lease another process took over). Only bin.ts ends the process: it passes
   * `process.exit`; a caller of `main` in process gets `ExitRequest` thrown instead.
   */
  exit(code: number): never;
}

/** What `CliIo.exit` throws when `main` runs in process: `main` resolves with `code`. */
export class ExitRequest extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
    this.name = 'ExitRequest';
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;

export interface Command<O extends Options = Options> {
  name: string;
  /** One line for `dsh --help`. */
  summary: string;
  /** The synopsis, e.g. `dsh log FILE`. */
  synopsis: string;
  /** What `dsh <name> --help` prints under the synopsis. */
  details: string;
  /** Its flags (`--help`/`-h` is added for every command). */
  options: O;
  /** How many positional arguments it takes, and what they are called in messages. */
  positionals: { min: number; max: number; name?: string };
  /**
   * Runs it; resolves with the exit code. A failure that is the user's doing (a file that cannot
   * be read, a corrupt log) is thrown as an `Error` and reported by main.ts in one line, exit 1.
   */
  run(args: { values: Record<string, string | boolean | undefined>; positionals: string[] }, io: CliIo): Promise<number>;
}

/** Bad command line: main.ts prints the message and the usage, exit 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose usage is shown (none: the global usage). */
    readonly command?: Command,
    /** `usage: false`: the message alone (one line), when the usage would not help. */
    readonly options: { usage?: boolean } = {},
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Parses a command's arguments strictly; throws a `UsageError` naming what is wrong. */
export function parseCommandArgs(command: Command, argv: readonly string[]): { help: boolean; values: Record<string, string | boolean | undefined>; positionals: string[] } {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    // parseArgs' messages are long and advise about `--`: keep their first sentence.
    const message = e instanceof Error ? e.message.split(/\.\s/)[0]!.replace(/\.$/, '') : String(e);
    throw new UsageError(message, command);
  }
  const { help, ...values } = parsed.values as Record<string, string | boolean | undefined>;
  if (help) return { help: true, values, positionals: parsed.positionals };
  const n = parsed.positionals.length;
  const { min, max, name = 'argument' } = command.positionals;
  if (n > max) throw new UsageError(`unexpected argument${n - max > 1 ? 's' : ''}: ${parsed.positionals.slice(max).join(' ')}`, command);
  if (n < min) throw new UsageError(`missing ${name}`, command);
  return { help: false, values, positionals: parsed.positionals };
}

/** `dsh <name> --help`. */
export function commandUsage(command: Command): string {
  return `usage: ${command.synopsis}\n\n${command.details}`;
}
